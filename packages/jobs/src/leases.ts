export const LEASE_EXPIRED_ERROR = "lease expired: the worker running this job stopped sending heartbeats"
