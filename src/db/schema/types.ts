/**
 * Booleans read back as 0/1 on SQLite and true/false on PostgreSQL; mappers normalise them with
 * Boolean(). Timestamps are ISO text.
 */
export type Bool = boolean | number;
