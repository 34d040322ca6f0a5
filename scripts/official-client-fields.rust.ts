/**
 * The Rust half of scripts/official-client-fields.ts: what the SDK inside the official clients
 * (bitwarden/sdk-internal) reads of an answer. A serde struct it deserializes is read whole (a
 * field is required unless Option or defaulted); a generated API model is read where a conversion
 * takes it (`fn try_from(x: CipherDetailsResponseModel)`, `impl … for Model { … self.x … }`), a
 * field required when wrapped in `require!` on every path. Only names and shapes are read.
 */
export interface RustStruct {
  source: string;
  deserialize: boolean;
  generated: boolean;
  fields: Map<string, { json: string; aliases: string[]; rust: string; required: boolean }>;
}

/** The body between the brace at `open` and its match. */
function braced(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}' && --depth === 0) return text.slice(open + 1, i);
  }
  return text.slice(open + 1);
}

export function rustStructsOf(path: string, text: string): Map<string, RustStruct> {
  const out = new Map<string, RustStruct>();
  const re = /((?:#\[[^\]]*\]\s*)*)pub(?:\([a-z]+\))? struct (\w+)\s*\{/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const attrs = m[1] ?? '';
    // Doc comments (`/// RFC reference: <…>`) would read as fields.
    const body = braced(text, m.index + m[0].length - 1).replace(/^\s*\/\/.*$/gm, '');
    const renameAll = /rename_all\s*=\s*"camelCase"/.test(attrs);
    const fields = new Map<string, { json: string; aliases: string[]; rust: string; required: boolean }>();
    const fre = /((?:#\[(?:[^\]"]|"[^"]*")*\]\s*)*)(?:pub(?:\([a-z]+\))?\s+)?(r#\w+|\w+)\s*:\s*([^,\n]+(?:<[^\n]*>)?),?\s*\n/g;
    for (let f = fre.exec(body); f; f = fre.exec(body)) {
      const fattrs = f[1] ?? '';
      if (/flatten/.test(fattrs)) continue;
      const rustName = f[2]!;
      const serdeAttrs = [...fattrs.matchAll(/#\[serde\(((?:[^\]"]|"[^"]*")*)\)\]/g)].map((x) => x[1]).join(',');
      const rename = /(?:^|[\s,(])rename\s*=\s*"([^"]+)"/.exec(serdeAttrs)?.[1];
      const plain = rustName.replace(/^r#/, '');
      const json = rename ?? (renameAll ? plain.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) : plain);
      const aliases = [...serdeAttrs.matchAll(/alias\s*=\s*"([^"]+)"/g)].map((a) => a[1]!).filter((a) => a !== json && !a.startsWith('R#'));
      const rust = f[3]!.trim().replace(/,$/, '');
      const required = !rust.startsWith('Option<') && !/\bdefault\b/.test(serdeAttrs);
      fields.set(rustName, { json, aliases, rust, required });
    }
    out.set(m[2]!, { source: path, deserialize: /Deserialize/.test(attrs), generated: /bitwarden-api-(api|identity)\/src\/models\//.test(path), fields });
  }
  return out;
}

/** The JSON type serde expects for a Rust type, and the model it names, if any. */
export function rustShape(rust: string, enums: Map<string, string>, structs: Map<string, RustStruct>): { type: string; model?: string; array?: boolean } {
  let t = rust.replace(/\s/g, '');
  for (;;) {
    const inner = /^(?:Option|Box)<(.*)>$/.exec(t);
    if (!inner) break;
    t = inner[1]!;
  }
  const vec = /^Vec<(.*)>$/.exec(t);
  if (vec) {
    const item = rustShape(vec[1]!, enums, structs);
    return item.model ? { type: 'array', model: item.model, array: true } : { type: 'array' };
  }
  const name = t.replace(/^(models|crate::models|bitwarden_api_api::models|bitwarden_api_identity::models)::/, '');
  if (/^(String|uuid::Uuid|Uuid|EncString|UnsignedSharedKey|DateTime<.*>)$/.test(name)) return { type: 'string' };
  if (/^(bool)$/.test(name)) return { type: 'boolean' };
  if (/^(i8|i16|i32|i64|u8|u16|u32|u64|usize|NonZeroU32)$/.test(name)) return { type: 'integer' };
  if (/^(f32|f64)$/.test(name)) return { type: 'number' };
  if (/^(HashMap|BTreeMap)</.test(name) || name === 'serde_json::Value' || name === 'Value') return { type: name.includes('Value') ? 'any' : 'object' };
  if (enums.has(name)) return { type: enums.get(name)! };
  if (structs.has(name)) return { type: 'object', model: `sdk:${name}` };
  return { type: 'any' };
}

export interface RustReads {
  source: string;
  fields: Map<string, boolean>; // rust field -> required (require!)
}

/** The `name: Type` pairs of a parameter list, tuples zipped: `(r, email): (Model, &str)`. */
function parameters(list: string): [string, string][] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i]!;
    if ('(<['.includes(c)) depth++;
    else if (')>]'.includes(c)) depth--;
    else if (c === ',' && depth === 0) {
      parts.push(list.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(list.slice(start));
  const typeName = (t: string) => t.replace(/^&\s*(mut\s+)?/, '').trim().replace(/^(\w+::)*/, '');
  return parts.flatMap((part): [string, string][] => {
    const colon = part.indexOf(':');
    if (colon === -1) return [];
    const pat = part.slice(0, colon).trim().replace(/^mut\s+/, '');
    const type = part.slice(colon + 1).trim();
    const tuple = /^\((.*)\)$/;
    const pats = tuple.exec(pat);
    const types = tuple.exec(type);
    if (pats && types) {
      const ps = pats[1]!.split(',').map((x) => x.trim());
      const tys = parameters(types[1]!.split(',').map((t, i) => `_${i}: ${t}`).join(',')).map(([, t]) => t);
      return ps.map((x, i): [string, string] => [x, tys[i] ?? '']);
    }
    return [[pat, typeName(type)]];
  });
}

/**
 * Whether `pos` in a function body is reached only on some paths: inside an `if`/`else`/`match`
 * block or a match arm (the KDF fields prelogin requires only for Argon2id).
 */
function conditional(body: string, pos: number): boolean {
  const open: boolean[] = [];
  let from = 0;
  for (let i = 0; i < pos; i++) {
    const c = body[i];
    if (c === '{') open.push(/=>|\b(if|else|match|while|for)\b/.test(body.slice(from, i)));
    if (c === '}') open.pop();
    if (c === '{' || c === '}' || c === ';') from = i + 1;
  }
  return open.includes(true) || body.slice(from, pos).includes('=>');
}

/** Fields a function taking a response model reads: `fn f(x: SomeResponseModel, …)` … `x.field`, required inside `require!`. */
export function rustReadsOf(path: string, text: string, models: Set<string>): Map<string, RustReads> {
  const out = new Map<string, RustReads>();
  // Tests build models field by field; what the SDK reads is in the code they test.
  const code = text.split(/#\[cfg\(test\)\]\s*mod \w+\s*\{/)[0]!;
  const read = (model: string, param: string, body: string) => {
    const reads = out.get(model) ?? { source: path, fields: new Map<string, boolean>() };
    for (const r of body.matchAll(new RegExp(`(require!\\(\\s*)?\\b${param}\\s*\\.\\s*(r#\\w+|[a-z_][a-z0-9_]*)\\b(?!\\s*\\()`, 'g'))) {
      const required = r[1] !== undefined && !conditional(body, r.index);
      reads.fields.set(r[2]!, (reads.fields.get(r[2]!) ?? false) || required);
    }
    out.set(model, reads);
  };
  const re = /fn \w+(?:<[^>]*>)?\(([^)]*(?:\([^)]*\)[^)]*)*)\)[^{;]*\{/g;
  for (let m = re.exec(code); m; m = re.exec(code)) {
    const body = braced(code, m.index + m[0].length - 1);
    for (const [param, model] of parameters(m[1]!)) if (models.has(model) && /^\w+$/.test(param)) read(model, param, body);
  }
  // Methods on the model itself: `impl PartialCipher for CipherResponseModel { fn merge(self, …) { self.name … } }`.
  const impls = /impl(?:<[^>]*>)?\s+(?:[\w:]+(?:<[^>]*>)?\s+for\s+)?(?:\w+::)*(\w+)\s*\{/g;
  for (let m = impls.exec(code); m; m = impls.exec(code)) if (models.has(m[1]!)) read(m[1]!, 'self', braced(code, m.index + m[0].length - 1));
  return out;
}
