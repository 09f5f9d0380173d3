/** A browser as far as the sign-in flow needs one: cookies kept per name, redirects seen one at a time. */
export const makeBrowser = (baseUrl: string) => {
  const cookies = new Map<string, string>()

  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";")
      const separator = pair!.indexOf("=")
      const name = pair!.slice(0, separator).trim()
      const value = pair!.slice(separator + 1).trim()
      const expired = attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute))
      if (expired || value === "") cookies.delete(name)
      else cookies.set(name, value)
    }
    return response
  }

  const cookieHeader = () => [...cookies].map(([name, value]) => `${name}=${value}`).join("; ")

  const request = async (path: string, init: RequestInit = {}) =>
    remember(
      await fetch(new URL(path, baseUrl), {
        ...init,
        redirect: "manual",
        headers: { ...(init.headers as Record<string, string>), cookie: cookieHeader() }
      })
    )

  return {
    cookies,
    get: (path: string) => request(path),
    postForm: (path: string, fields: Record<string, string>) =>
      request(path, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString()
      }),
    /** Follows redirects within the server; stops at the first response that is not one, or leaves the server. */
    follow: async (first: Response) => {
      let response = first
      while (response.status >= 300 && response.status < 400) {
        const location = new URL(response.headers.get("location")!, baseUrl)
        if (location.origin !== new URL(baseUrl).origin) return { response, location }
        response = await request(`${location.pathname}${location.search}`)
      }
      return { response, location: undefined }
    }
  }
}

/** The CSRF token of the first form on a page. */
export const formToken = (html: string) => {
  const match = /name="authenticity_token" value="([^"]*)"/.exec(html)
  if (match === null) throw new Error(`no form token in ${html}`)
  return match[1]!
}

/**
 * Follows an authorization URL as a browser would, signing in on the way: the URL the browser is finally sent to,
 * outside the server (the application's callback).
 */
export const signInThrough = async (baseUrl: string, authorizationUrl: string, email: string, password: string) => {
  const browser = makeBrowser(baseUrl)
  const url = new URL(authorizationUrl)
  const { location, response: page } = await browser.follow(await browser.get(`${url.pathname}${url.search}`))
  if (location !== undefined) return location
  const html = await page.text()
  const returnTo = /name="return_to" value="([^"]*)"/.exec(html)?.[1]?.replace(/&amp;/g, "&")
  const submitted = await browser.postForm("/users/sign_in", {
    authenticity_token: formToken(html),
    ...(returnTo === undefined ? {} : { return_to: returnTo }),
    email,
    password
  })
  const { location: callback, response } = await browser.follow(submitted)
  if (callback === undefined) throw new Error(`signing in ended at ${response.status}: ${await response.text()}`)
  return callback
}
