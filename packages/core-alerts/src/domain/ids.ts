const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Whether `value` is written as a UUID (any case): the ids of notifications, subscriptions, emails and digest runs.
 * Any other text names no record, and is never sent to the database, where casting it would fail.
 */
export const isUuid = (value: string): boolean => UUID.test(value)
