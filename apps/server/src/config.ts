import { Either, Schema } from "effect"

export const SERVICE_NAMES = ["sso", "alerts", "linkcheck"] as const
export type ServiceName = (typeof SERVICE_NAMES)[number]

const PortNumber = Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 65535))
const Seconds = Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 3600))

const urlWithProtocol = (protocols: ReadonlyArray<string>) =>
  Schema.String.pipe(Schema.filter((value) => URL.canParse(value) && protocols.includes(new URL(value).protocol)))

const ServiceList = Schema.transform(
  Schema.String,
  Schema.Array(Schema.Literal(...SERVICE_NAMES)),
  {
    strict: false,
    decode: (value) => [...new Set(value.split(",").map((name) => name.trim()).filter((name) => name !== ""))],
    encode: (names) => names.join(",")
  }
)

const PositiveInt = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 10_000))

const DomainList = Schema.transform(
  Schema.String.pipe(Schema.pattern(/^[a-z0-9.,\s-]*$/i)),
  Schema.Array(Schema.String),
  {
    strict: true,
    decode: (value) => value.split(",").map((domain) => domain.trim().toLowerCase().replace(/^\./, "")).filter((d) => d !== ""),
    encode: (domains) => domains.join(",")
  }
)

const LogLevel = Schema.Literal("trace", "debug", "info", "warning", "error", "fatal", "none")

const Flag = Schema.transform(Schema.Literal("true", "false", "1", "0"), Schema.Boolean, {
  strict: true,
  decode: (value) => value === "true" || value === "1",
  encode: (value) => (value ? "true" : "false")
})

/** One environment variable: how to decode it, what a good value looks like, and its default. */
interface Variable<A> {
  readonly decode: (raw: string) => Either.Either<A, unknown>
  readonly expected: string
  readonly fallback: A
}

const variable = <A, I extends string, F = A>(
  schema: Schema.Schema<A, I>,
  expected: string,
  fallback: F
): Variable<A | F> => ({
  decode: Schema.decodeUnknownEither(schema),
  expected,
  fallback
})

const optionalString = (expected: string) => variable(Schema.String, expected, undefined)

/** The environment variables the reference server reads, with their defaults (architecture.md). */
const variables = {
  PORT: variable(PortNumber, "a whole number from 0 to 65535", 3000),
  HOST: variable(Schema.String, "a host name or address to listen on", "0.0.0.0"),
  DATABASE_URL: variable(urlWithProtocol(["postgres:", "postgresql:"]), "a postgres:// or postgresql:// URL", undefined),
  DATA_DIR: variable(Schema.String, "a directory path", "./data"),
  SERVICES: variable(
    ServiceList,
    `a comma-separated list of ${SERVICE_NAMES.join(", ")}`,
    SERVICE_NAMES
  ),
  PUBLIC_SITE_URL: variable(urlWithProtocol(["http:", "https:"]), "an absolute http(s) URL", "http://localhost:3000"),
  TLS_CERT_FILE: optionalString("a path to a PEM certificate file"),
  TLS_KEY_FILE: optionalString("a path to a PEM private key file"),
  TRUST_PROXY: variable(Flag, "true or false", false),
  LOG_LEVEL: variable(LogLevel, `one of ${LogLevel.literals.join(", ")}`, "info" as const),
  SHUTDOWN_GRACE_SECONDS: variable(Seconds, "a whole number of seconds from 0 to 3600", 30),
  LINKCHECK_ALLOW_PRIVATE_ADDRESSES: variable(Flag, "true or false", false),
  LINKCHECK_SUSPICIOUS_DOMAINS: variable(DomainList, "a comma-separated list of domain names", []),
  LINKCHECK_INTERNAL_DOMAINS: variable(DomainList, "a comma-separated list of domain names", []),
  LINKCHECK_CONCURRENCY: variable(PositiveInt, "a whole number from 1 to 10000", 128),
  LINKCHECK_PER_HOST_CONCURRENCY: variable(PositiveInt, "a whole number from 1 to 10000", 4)
}

type Variables = typeof variables
type Values = { readonly [K in keyof Variables]: Variables[K]["fallback"] }

export type ServerConfig = {
  readonly port: number
  readonly host: string
  readonly database: { readonly _tag: "Postgres"; readonly url: string } | { readonly _tag: "Pglite"; readonly dataDir: string }
  readonly dataDir: string
  readonly services: ReadonlyArray<ServiceName>
  readonly publicSiteUrl: string
  readonly tls: { readonly certFile: string; readonly keyFile: string } | undefined
  readonly trustProxy: boolean
  readonly logLevel: typeof LogLevel.Type
  readonly shutdownGraceSeconds: number
  readonly linkcheck: {
    readonly allowPrivateAddresses: boolean
    readonly suspiciousDomains: ReadonlyArray<string>
    readonly internalDomains: ReadonlyArray<string>
    readonly concurrency: number
    readonly perHostConcurrency: number
  }
}

export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", {
  problems: Schema.Array(Schema.String)
}) {
  override get message() {
    return `Invalid configuration:\n${this.problems.map((problem) => `  - ${problem}`).join("\n")}`
  }
}

/** Decodes the environment; a blank variable counts as unset. Every bad variable is reported at once. */
export const parseServerConfig = (env: Record<string, string | undefined>): Either.Either<ServerConfig, InvalidConfig> => {
  const problems: Array<string> = []
  const values: Record<string, unknown> = {}
  for (const [name, spec] of Object.entries(variables) as Array<[string, Variable<unknown>]>) {
    const raw = env[name]?.trim()
    if (raw === undefined || raw === "") {
      values[name] = spec.fallback
      continue
    }
    const decoded = spec.decode(raw)
    if (Either.isLeft(decoded)) problems.push(`${name} must be ${spec.expected} (got ${JSON.stringify(raw)})`)
    else values[name] = decoded.right
  }
  const vars = values as Values
  if ((vars.TLS_CERT_FILE === undefined) !== (vars.TLS_KEY_FILE === undefined)) {
    problems.push("TLS_CERT_FILE and TLS_KEY_FILE must be set together")
  }
  if (problems.length > 0) return Either.left(new InvalidConfig({ problems }))
  return Either.right({
    port: vars.PORT,
    host: vars.HOST,
    database: vars.DATABASE_URL !== undefined
      ? { _tag: "Postgres", url: vars.DATABASE_URL }
      : { _tag: "Pglite", dataDir: vars.DATA_DIR },
    dataDir: vars.DATA_DIR,
    services: vars.SERVICES,
    publicSiteUrl: vars.PUBLIC_SITE_URL,
    tls: vars.TLS_CERT_FILE !== undefined && vars.TLS_KEY_FILE !== undefined
      ? { certFile: vars.TLS_CERT_FILE, keyFile: vars.TLS_KEY_FILE }
      : undefined,
    trustProxy: vars.TRUST_PROXY,
    logLevel: vars.LOG_LEVEL,
    shutdownGraceSeconds: vars.SHUTDOWN_GRACE_SECONDS,
    linkcheck: {
      allowPrivateAddresses: vars.LINKCHECK_ALLOW_PRIVATE_ADDRESSES,
      suspiciousDomains: vars.LINKCHECK_SUSPICIOUS_DOMAINS,
      internalDomains: vars.LINKCHECK_INTERNAL_DOMAINS,
      concurrency: vars.LINKCHECK_CONCURRENCY,
      perHostConcurrency: vars.LINKCHECK_PER_HOST_CONCURRENCY
    }
  })
}
