import { startClientApp } from "./clientApp"

const required = (name: string) => {
  const value = process.env[name]
  if (value === undefined || value === "") {
    console.error(`Set ${name} (see README.md).`)
    process.exit(1)
  }
  return value
}

const port = Number(process.env.PORT ?? "4000")
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a port number, not ${process.env.PORT}`)
  process.exit(1)
}

const app = await startClientApp({
  ssoUrl: required("SSO_URL"),
  clientId: required("CLIENT_ID"),
  clientSecret: required("CLIENT_SECRET"),
  applicationName: required("APPLICATION_NAME"),
  publicUrl: required("PUBLIC_URL"),
  port,
  host: process.env.HOST
})
console.log(`Example app listening on ${app.url}; open ${app.publicUrl}`)

const stop = () => {
  app.close().then(() => process.exit(0), (error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
process.once("SIGINT", stop)
process.once("SIGTERM", stop)
