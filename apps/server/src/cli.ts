import { Command } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Console, Effect, Layer } from "effect"
import { migratedDatabaseLayer, serveUntilDatabaseLost } from "./app"
import { InvalidConfig, parseServerConfig } from "./config"
import { alertsCommand } from "./commands/alerts"
import { linkcheckCommand } from "./commands/linkcheck"
import { ssoCommand } from "./commands/sso"
import { loggingLayer } from "./logging"
import serverPackage from "../package.json" with { type: "json" }

const loadConfig = Effect.suspend(() => parseServerConfig(process.env))

const serve = Command.make("serve", {}, () =>
  Effect.flatMap(loadConfig, (config) =>
    serveUntilDatabaseLost(config).pipe(Effect.provide(loggingLayer(config.logLevel))))
).pipe(Command.withDescription("Start the reference server: migrations, HTTP host and workers (stop with SIGTERM)"))

const migrate = Command.make("migrate", {}, () =>
  Effect.flatMap(loadConfig, (config) =>
    Layer.build(migratedDatabaseLayer(config)).pipe(
      Effect.scoped,
      Effect.provide(loggingLayer(config.logLevel))
    ))
).pipe(Command.withDescription("Apply the database migrations of every package, then exit"))

const civicstack = Command.make("civicstack").pipe(
  Command.withDescription("civicstack: single sign-on, email alerts and link checking for a publishing platform"),
  Command.withSubcommands([serve, migrate, ssoCommand, alertsCommand, linkcheckCommand])
)

const run = Command.run(civicstack, { name: "civicstack", version: serverPackage.version })

run(process.argv).pipe(
  Effect.catchIf(
    (error): error is InvalidConfig => error instanceof InvalidConfig,
    (error) => Console.error(error.message).pipe(Effect.zipRight(Effect.sync(() => { process.exitCode = 1 })))
  ),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disablePrettyLogger: true })
)
