import { anyOf, createAlertsClient } from "@civicstack/sdk-alerts"

export interface PublishOptions {
  /** Where the email alert API is served, e.g. `http://localhost:3000`. */
  readonly alertsUrl: string
  /** An SSO API token of a user with `signin` on `email-alert-api`. */
  readonly bearerToken: string
  readonly addresses: ReadonlyArray<string>
}

export interface Published {
  readonly listSlug: string
  readonly subscriptionIds: ReadonlyArray<string>
  readonly subject: string
}

/**
 * What a publishing app does: find or create the list for a topic, subscribe readers to it, and tell the service
 * about a change to content on that topic. The service sends the emails from its queue.
 */
export const publish = async (options: PublishOptions): Promise<Published> => {
  const alerts = createAlertsClient({ baseUrl: options.alertsUrl, bearerToken: options.bearerToken })
  try {
    const { outcome, subscriberList } = await alerts.findOrCreateList({
      title: "Tax news",
      tags: { topics: anyOf("tax", "vat") },
      documentType: "news_story"
    })
    console.log(`List ${subscriberList.slug} (${outcome === "created" ? "created" : "already there"})`)

    const subscriptionIds: Array<string> = []
    for (const address of options.addresses) {
      const { id } = await alerts.subscribe({ address, listId: subscriberList.id })
      subscriptionIds.push(id)
      console.log(`Subscribed ${address}`)
    }

    const subject = `VAT rates change on ${new Date().toISOString().slice(0, 10)}`
    await alerts.notify({
      subject,
      body: "The standard rate of VAT changes next month.\n\n[Read the guidance](https://www.example.org/vat-rates)",
      tags: { topics: ["vat"] },
      documentType: "news_story"
    })
    console.log(`Notification sent: ${subject}`)
    return { listSlug: subscriberList.slug, subscriptionIds, subject }
  } finally {
    await alerts.close()
  }
}
