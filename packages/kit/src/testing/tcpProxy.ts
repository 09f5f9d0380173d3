/** A TCP proxy for tests that cut a service off (a database outage) and restore it; not published. */
import * as Net from "node:net"

export interface TcpProxy {
  readonly port: number
  /** Drops every connection and refuses new ones until `restore`. */
  readonly cut: () => Promise<void>
  readonly restore: () => Promise<void>
  readonly close: () => Promise<void>
}

export const startTcpProxy = async (target: { readonly host: string; readonly port: number }): Promise<TcpProxy> => {
  const sockets = new Set<Net.Socket>()
  const track = (socket: Net.Socket) => {
    sockets.add(socket)
    socket.once("close", () => sockets.delete(socket))
  }
  const server = Net.createServer((client) => {
    const upstream = Net.connect(target.port, target.host)
    track(client)
    track(upstream)
    client.pipe(upstream).pipe(client)
    client.on("error", () => upstream.destroy())
    upstream.on("error", () => client.destroy())
    client.on("close", () => upstream.destroy())
    upstream.on("close", () => client.destroy())
  })
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject)
        resolve()
      })
    })
  await listen(0)
  const port = (server.address() as Net.AddressInfo).port
  const dropAll = () => {
    for (const socket of sockets) socket.destroy()
  }
  return {
    port,
    cut: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        dropAll()
      }),
    restore: () => listen(port),
    close: () =>
      new Promise<void>((resolve) => {
        dropAll()
        if (!server.listening) return resolve()
        server.close(() => resolve())
      })
  }
}
