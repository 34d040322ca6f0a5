/** The part of oidc-provider (no types of its own in v9) the test identity provider uses. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  interface GrantConstructor {
    new (properties: { accountId: string; clientId: string }): Grant;
    find(id: string): Promise<Grant | undefined>;
  }
  interface KoaContext {
    path: string;
    method: string;
    type: string;
    body: unknown;
    oidc: {
      provider: { Grant: GrantConstructor };
      session?: { accountId?: string; grantIdFor(clientId: string): string | undefined };
      client?: { clientId: string };
    };
  }
  interface Account {
    accountId: string;
    claims(): Record<string, unknown> | Promise<Record<string, unknown>>;
  }
  interface Configuration {
    clients: Record<string, unknown>[];
    jwks: { keys: Record<string, unknown>[] };
    claims: Record<string, string[]>;
    acrValues: string[];
    conformIdTokenClaims: boolean;
    features: Record<string, unknown>;
    interactions: { url(ctx: KoaContext, interaction: { uid: string }): string };
    cookies: { keys: string[] };
    ttl: Record<string, number>;
    findAccount(ctx: KoaContext, sub: string): Account | undefined | Promise<Account | undefined>;
    loadExistingGrant(ctx: KoaContext): Promise<Grant | undefined>;
    renderError(ctx: KoaContext, out: { error: string; error_description?: string }, error: Error): void | Promise<void>;
  }
  interface InteractionDetails {
    uid: string;
    prompt: { name: string };
    params: Record<string, unknown>;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: Record<string, unknown>, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  }
}
