import { Type, type Static } from 'typebox';
import { EncString, Guid } from '../../http/schemas.js';
import type { FolderRow } from './folders.repository.js';

export const FolderRequest = Type.Object({ name: EncString(1000, { description: 'Encrypted folder name' }) });

export const FolderResponse = Type.Object(
  {
    object: Type.Literal('folder'),
    id: Guid,
    name: Type.String(),
    revisionDate: Type.String({ format: 'date-time' }),
  },
  { description: 'Folder (FolderResponseModel)' },
);
export type FolderResponse = Static<typeof FolderResponse>;

export function toFolderResponse(folder: FolderRow): FolderResponse {
  return { object: 'folder' as const, id: folder.id, name: folder.name, revisionDate: folder.revision_date };
}
