/** RFC 8058 one-click unsubscribe: the link in angle brackets, and the POST body a mail client sends to it. */
export const unsubscribeHeaders = (unsubscribeUrl: string | undefined): Readonly<Record<string, string>> =>
  unsubscribeUrl === undefined
    ? {}
    : { "List-Unsubscribe": `<${unsubscribeUrl}>`, "List-Unsubscribe-Post": "List-Unsubscribe=One-Click" }
