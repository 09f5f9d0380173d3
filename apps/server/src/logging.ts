import { Layer, Logger, LogLevel } from "effect"
import type { ServerConfig } from "./config"

const levels: Record<ServerConfig["logLevel"], LogLevel.LogLevel> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

/** One JSON object per line on stdout, at or above the configured level. */
export const loggingLayer = (level: ServerConfig["logLevel"]) =>
  Layer.merge(Logger.json, Logger.minimumLogLevel(levels[level]))
