import { BadRequest, HttpError } from '../../http/errors.js';

/**
 * The feature services name a field after their own request bodies (`users` of a group); the
 * public request names it otherwise (`memberIds`). Same rule, the caller's own field name.
 */
export async function renamingField<T>(from: string, to: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof HttpError && error.validationErrors && from in error.validationErrors) {
      const { [from]: messages, ...rest } = error.validationErrors;
      const renamed = (messages ?? []).map((m) => m.replace(`The ${from} field`, `The ${to} field`));
      throw new BadRequest(error.message, { ...rest, [to]: renamed });
    }
    throw error;
  }
}
