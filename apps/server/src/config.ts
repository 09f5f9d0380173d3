import { expecting, Flag, TrustedProxiesFromString } from "@civicstack/kit"
import { Config, ConfigError, ConfigProvider, Effect, Either, Option, ParseResult, Redacted, Schema } from "effect"
import { SERVICE_NAMES, SERVICE_SETTINGS, type ServiceSections } from "./services/index"

export const ROLES = ["web", "workers"] as const
export type Role = (typeof ROLES)[number]

const urlWithProtocol = (protocols: ReadonlyArray<string>, expected: string) =>
  Schema.String.pipe(
    Schema.filter((value) => URL.canParse(value) && protocols.includes(new URL(value).protocol)),
    Schema.annotations(expecting(expected))
  )

/** A comma-separated list of names from `names`, each once, in the order given; at least one. */
const NameList = <const Names extends ReadonlyArray<string>>(names: Names) =>
  Schema.transform(
    Schema.String,
    Schema.NonEmptyArray(Schema.Literal(...names)),
    {
      strict: false,
      decode: (value) => [...new Set(value.split(",").map((name) => name.trim()).filter((name) => name !== ""))],
      encode: (list) => list.join(",")
    }
  ).annotations(expecting(`a comma-separated list of ${names.join(", ")}`))

const LogLevel = Schema.Literal("trace", "debug", "info", "warning", "error", "fatal", "none")

const setting = <A, I extends string>(name: string, schema: Schema.Schema<A, I>, fallback: A) =>
  Schema.Config(name, schema).pipe(Config.withDefault(fallback))

const optional = <A, I extends string>(name: string, schema: Schema.Schema<A, I>) =>
  Config.option(Schema.Config(name, schema))

const FilePath = Schema.String.annotations(expecting("a file path"))

const HttpUrl = urlWithProtocol(["http:", "https:"], "an absolute http(s) URL")

/** OpenTelemetry's list of request headers: `name=value` pairs separated by commas, values percent-encoded. */
const OtlpHeaders = Schema.transformOrFail(Schema.String, Schema.Record({ key: Schema.String, value: Schema.String }), {
  strict: true,
  decode: (value, _, ast) => {
    const headers: Record<string, string> = {}
    for (const pair of value.split(",")) {
      const [name, ...rest] = pair.split("=")
      const decoded = rest.length === 0 ? undefined : Option.liftThrowable(decodeURIComponent)(rest.join("=").trim())
      if (name!.trim() === "" || decoded === undefined || Option.isNone(decoded)) {
        return ParseResult.fail(new ParseResult.Type(ast, value))
      }
      headers[name!.trim().toLowerCase()] = decoded.value
    }
    return ParseResult.succeed(headers)
  },
  encode: (headers) =>
    ParseResult.succeed(Object.entries(headers).map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join(","))
}).annotations(expecting("comma-separated name=value pairs"))

const OtlpProtocol = Schema.Literal("http/protobuf", "http/json")

/**
 * Where spans go, from OpenTelemetry's variables: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else
 * `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`; none of them set, no spans are made.
 */
const tracingConfig = Config.all({
  endpoint: optional("OTEL_EXPORTER_OTLP_ENDPOINT", HttpUrl),
  tracesEndpoint: optional("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", HttpUrl),
  headers: setting("OTEL_EXPORTER_OTLP_HEADERS", OtlpHeaders, {}),
  protocol: setting(
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    OtlpProtocol.annotations(expecting(`one of ${OtlpProtocol.literals.join(", ")}`)),
    "http/protobuf" as const
  ),
  serviceName: setting("OTEL_SERVICE_NAME", Schema.String, "civicstack")
}).pipe(Config.map(({ endpoint, tracesEndpoint, ...exporter }) => {
  const url = Option.orElse(tracesEndpoint, () => Option.map(endpoint, (base) => `${base.replace(/\/+$/, "")}/v1/traces`))
  return Option.match(url, { onNone: () => undefined, onSome: (url) => ({ url, ...exporter }) })
}))

export type TracingConfig = NonNullable<Config.Config.Success<typeof tracingConfig>>

/** The host's own section: where it listens, which database, what this copy does. */
const hostConfig = Config.all({
  port: setting(
    "PORT",
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 65535), Schema.annotations(expecting("a whole number from 0 to 65535"))),
    3000
  ),
  host: setting("HOST", Schema.String, "0.0.0.0"),
  databaseUrl: optional(
    "DATABASE_URL",
    urlWithProtocol(["postgres:", "postgresql:"], "a postgres:// or postgresql:// URL")
  ).pipe(Config.map(Option.map(Redacted.make))),
  databasePoolSize: setting(
    "DATABASE_POOL_SIZE",
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000), Schema.annotations(expecting("a whole number from 1 to 1000"))),
    10
  ),
  dataDir: setting("DATA_DIR", Schema.String, "./data"),
  services: setting("SERVICES", NameList(SERVICE_NAMES), SERVICE_NAMES),
  run: setting("RUN", NameList(ROLES), ROLES),
  publicSiteUrl: setting("PUBLIC_SITE_URL", urlWithProtocol(["http:", "https:"], "an absolute http(s) URL"), "http://localhost:3000"),
  trustProxy: setting("TRUST_PROXY", TrustedProxiesFromString, false),
  production: setting("NODE_ENV", Schema.String, "development").pipe(Config.map((value) => value === "production")),
  bootstrapFile: optional("CIVICSTACK_BOOTSTRAP", FilePath),
  metrics: setting("METRICS", Flag, true),
  tracing: tracingConfig,
  logLevel: setting(
    "LOG_LEVEL",
    LogLevel.annotations(expecting(`one of ${LogLevel.literals.join(", ")}`)),
    "info" as const
  ),
  shutdownGraceSeconds: setting(
    "SHUTDOWN_GRACE_SECONDS",
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 3600), Schema.annotations(expecting("a whole number of seconds from 0 to 3600"))),
    30
  ),
  tls: Config.all({ certFile: optional("TLS_CERT_FILE", FilePath), keyFile: optional("TLS_KEY_FILE", FilePath) }).pipe(
    Config.mapOrFail(({ certFile, keyFile }) =>
      Option.isSome(certFile) && Option.isSome(keyFile)
        ? Either.right({ certFile: certFile.value, keyFile: keyFile.value })
        : Option.isNone(certFile) && Option.isNone(keyFile)
        ? Either.right(undefined)
        : Either.left(ConfigError.Unsupported([], "TLS_CERT_FILE and TLS_KEY_FILE must be set together"))
    )
  )
})

/**
 * The host's section and each service's own sections (`LINKCHECK_...`, `ALERTS_...`, the email provider's), read
 * together so every bad value shows.
 */
const serverConfigSections = (dataDir: string) =>
  Config.all({
    host: hostConfig,
    services: Config.all(SERVICE_SETTINGS.map((service) => service.config(dataDir))).pipe(
      Config.map((sections) => Object.assign({}, ...sections) as ServiceSections)
    )
  })

type HostSection = Config.Config.Success<typeof hostConfig>

export type ServerConfig = Omit<HostSection, "databaseUrl" | "databasePoolSize"> & ServiceSections & {
  readonly database:
    | { readonly _tag: "Postgres"; readonly url: Redacted.Redacted<string>; readonly poolSize: number }
    | { readonly _tag: "Pglite"; readonly dataDir: string }
}

export class InvalidConfig extends Schema.TaggedError<InvalidConfig>()("InvalidConfig", {
  problems: Schema.Array(Schema.String)
}) {
  override get message() {
    return `Invalid configuration:\n${this.problems.map((problem) => `  - ${problem}`).join("\n")}`
  }
}

/** Variables whose values may hold a password or key: a bad one is named, never shown. */
const SECRET_VARIABLES = new Set(["DATABASE_URL", "OTEL_EXPORTER_OTLP_HEADERS", ...SERVICE_SETTINGS.flatMap((service) => service.secretVariables)])

/** One line per bad value: the variable, what it must be, and what it was (unless it is a secret). */
const describeProblems = (error: ConfigError.ConfigError, env: Record<string, string | undefined>) =>
  ConfigError.reduceWithContext(error, undefined, {
    andCase: (_, left: ReadonlyArray<string>, right: ReadonlyArray<string>) => [...left, ...right],
    orCase: (_, left: ReadonlyArray<string>, right: ReadonlyArray<string>) => [...left, ...right],
    invalidDataCase: (_, path, message) => {
      const name = path.join("_")
      const shown = SECRET_VARIABLES.has(name) ? "" : ` (got ${JSON.stringify(env[name]?.trim())})`
      return [`${name} must be ${message}${shown}`]
    },
    missingDataCase: (_, path) => [`${path.join("_")} must be set`],
    sourceUnavailableCase: (_, path, message) => [`${path.join("_")} could not be read: ${message}`],
    unsupportedCase: (_, path, message) => [path.length === 0 ? message : `${path.join("_")}: ${message}`]
  })

/** Decodes the environment; a blank variable counts as unset. Every bad variable is reported at once. */
export const parseServerConfig = (env: Record<string, string | undefined>): Either.Either<ServerConfig, InvalidConfig> => {
  const setVariables = Object.entries(env).flatMap(([name, value]) => {
    const trimmed = value?.trim() ?? ""
    return trimmed === "" ? [] : [[name, trimmed] as const]
  })
  const provider = ConfigProvider.fromMap(new Map(setVariables), { pathDelim: "_" })
  const dataDir = setVariables.find(([name]) => name === "DATA_DIR")?.[1] ?? "./data"
  const decoded = Effect.runSync(Effect.either(Effect.withConfigProvider(serverConfigSections(dataDir), provider)))
  if (Either.isLeft(decoded)) return Either.left(new InvalidConfig({ problems: describeProblems(decoded.left, env) }))
  const { databasePoolSize, databaseUrl, ...host } = decoded.right.host
  const { services } = decoded.right
  if (host.production) {
    const problems = SERVICE_SETTINGS.flatMap((service) => service.productionProblems(services))
    if (problems.length > 0) return Either.left(new InvalidConfig({ problems }))
  }
  return Either.right({
    ...host,
    ...services,
    database: Option.match(databaseUrl, {
      onNone: () => ({ _tag: "Pglite", dataDir: host.dataDir }) as const,
      onSome: (url) => ({ _tag: "Postgres", url, poolSize: databasePoolSize }) as const
    })
  })
}
