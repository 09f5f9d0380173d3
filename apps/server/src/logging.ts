import { HashMap, Layer, Logger, LogLevel } from "effect"
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

/** An http(s) URL inside a JSON line: it ends at whitespace, a quote or a backslash (an escape). */
const URL_IN_TEXT = /\bhttps?:\/\/[^\s"'\\<>]+/gi

/**
 * A URL as logs may show it: without its userinfo, and with each query value replaced, since both carry credentials
 * (webhook URIs with a key in their query, links with tokens). Paths and parameter names stay, for finding things.
 */
export const redactUrl = (text: string): string => {
  if (!URL.canParse(text)) return text
  const url = new URL(text)
  if (url.username === "" && url.password === "" && url.search === "") return text
  url.username = ""
  url.password = ""
  const names = [...url.searchParams.keys()]
  url.search = names.length === 0 ? "" : names.map((name) => `${encodeURIComponent(name)}=redacted`).join("&")
  return url.href
}

/** Every URL in a log line, redacted. */
export const redactUrls = (line: string): string => line.replace(URL_IN_TEXT, redactUrl)

/** An annotation as logs may show it: a request's path keeps its query's names only (`/check?uri=redacted`). */
const redactAnnotation = (value: unknown): unknown => {
  if (typeof value !== "string") return value
  if (!value.startsWith("/") || !value.includes("?")) return value
  const base = "http://path.invalid"
  return redactUrl(`${base}${value}`).slice(base.length)
}

/** The JSON logger, with the URLs in each line's annotations, message and cause redacted. */
const redactingJsonLogger = Logger.map(
  Logger.mapInputOptions(Logger.jsonLogger, (options) => ({
    ...options,
    annotations: HashMap.map(options.annotations, redactAnnotation)
  })),
  redactUrls
)

/** One JSON object per line on stdout, at or above the configured level, with the URLs in it redacted. */
export const loggingLayer = (level: ServerConfig["logLevel"]) =>
  Layer.merge(
    Logger.replace(Logger.defaultLogger, Logger.withConsoleLog(redactingJsonLogger)),
    Logger.minimumLogLevel(levels[level])
  )
