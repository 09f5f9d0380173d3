/**
 * The email alert records the soak's requests work on, made through the API before the load: lists that the lookups
 * and new subscriptions go to, and lists with a few subscribers each that the notifications match.
 */

/** Lists looked up and subscribed to; no notification matches them, so their growing subscribers get no email. */
const LOOKUP_LISTS = 50
/** Lists the notifications match, one each, with a fixed number of subscribers: each notification fans out to them. */
const NOTIFIED_LISTS = 10
export const SUBSCRIBERS_PER_NOTIFIED_LIST = 10

export interface LookupList {
  readonly id: number
  readonly slug: string
  readonly topic: string
}

export interface AlertsFixtures {
  readonly lookupLists: ReadonlyArray<LookupList>
  /** The `topics` tag value of each notified list. */
  readonly notifiedTopics: ReadonlyArray<string>
}

const call = async (url: string, token: string, path: string, body: unknown, expected: ReadonlyArray<number>) => {
  const response = await fetch(new URL(path, url), {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (!expected.includes(response.status)) throw new Error(`POST ${path} answered ${response.status}: ${text}`)
  return JSON.parse(text) as unknown
}

const createList = async (url: string, token: string, title: string, topic: string): Promise<LookupList> => {
  const answer = await call(url, token, "/subscriber-lists", { title, tags: { topics: [topic] } }, [201])
  const { id, slug } = (answer as { subscriber_list: { id: number; slug: string } }).subscriber_list
  return { id, slug, topic }
}

export const createAlertsFixtures = async (url: string, token: string): Promise<AlertsFixtures> => {
  const lookupLists: Array<LookupList> = []
  for (let index = 0; index < LOOKUP_LISTS; index++) {
    lookupLists.push(await createList(url, token, `Soak list ${index}`, `soak-list-${index}`))
  }
  const notifiedTopics: Array<string> = []
  for (let index = 0; index < NOTIFIED_LISTS; index++) {
    const list = await createList(url, token, `Soak notified list ${index}`, `soak-notified-${index}`)
    for (let subscriber = 0; subscriber < SUBSCRIBERS_PER_NOTIFIED_LIST; subscriber++) {
      await call(url, token, "/subscriptions", {
        address: `notified-${index}-${subscriber}@bench.example`,
        subscribable_id: list.id
      }, [201])
    }
    notifiedTopics.push(list.topic)
  }
  return { lookupLists, notifiedTopics }
}
