import { Type } from 'typebox';

const Status = Type.Enum(['Healthy', 'Degraded', 'Unhealthy']);

export const BasicHealth = Type.Object({ status: Status }, { description: 'Basic health record' });

export const ExtendedHealth = Type.Object(
  {
    status: Status,
    results: Type.Record(
      Type.String(),
      Type.Object({
        status: Status,
        description: Type.Union([Type.String(), Type.Null()]),
        data: Type.Record(Type.String(), Type.Unknown()),
      }),
    ),
  },
  { description: 'Extended health record' },
);

export const Alive = Type.String({ format: 'date-time', description: 'Current server time (UTC)' });
