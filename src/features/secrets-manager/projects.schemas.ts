import { Type, type Static } from 'typebox';
import type { Selectable } from 'kysely';
import type { ProjectsTable } from '../../db/schema.js';
import { EncString, Guid } from '../../http/schemas.js';
import type { Rights } from './sm-access.js';

export type ProjectRow = Selectable<ProjectsTable>;

/** Create and update send the same body: the name, encrypted with the organization key. */
export const ProjectBody = Type.Object({ name: EncString(1000) });
export type ProjectBody = Static<typeof ProjectBody>;

export const ProjectResponse = Type.Object({
  object: Type.Literal('project'),
  id: Guid,
  organizationId: Guid,
  name: Type.String(),
  creationDate: Type.String({ format: 'date-time' }),
  revisionDate: Type.String({ format: 'date-time' }),
  read: Type.Boolean(),
  write: Type.Boolean(),
});

export function toProjectResponse(row: ProjectRow, rights: Rights): Static<typeof ProjectResponse> {
  return {
    object: 'project',
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    creationDate: row.creation_date,
    revisionDate: row.revision_date,
    read: rights.read,
    write: rights.write,
  };
}
