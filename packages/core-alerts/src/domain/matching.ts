import type { CriteriaMap, Criterion, ListCriteria } from "./criteria"
import { hasCriteria } from "./criteria"

/** What a notification says about its content, for matching it to lists. */
export interface NotificationFacts {
  readonly tags: ReadonlyMap<string, ReadonlyArray<string>>
  readonly links: ReadonlyMap<string, ReadonlyArray<string>>
  readonly documentType: string | null
  readonly emailDocumentSupertype: string | null
  readonly governmentDocumentSupertype: string | null
  readonly contentId: string | null
}

const criterionHolds = (criterion: Criterion, values: ReadonlyArray<string> | undefined) => {
  if (values === undefined) return false
  return criterion.match === "all"
    ? criterion.values.every((value) => values.includes(value))
    : criterion.values.some((value) => values.includes(value))
}

const everyCriterionHolds = (criteria: CriteriaMap, facts: ReadonlyMap<string, ReadonlyArray<string>>) =>
  [...criteria].every(([name, criterion]) => criterionHolds(criterion, facts.get(name)))

const typeFieldHolds = (listValue: string, notificationValue: string | null) =>
  listValue === "" || listValue === notificationValue

/**
 * Whether a notification goes to a list's subscribers. The list's non-empty type fields must equal the
 * notification's, its content_id (if any) must be the notification's, and every tag of the list must hold for the
 * notification's tags (`any`: one shared value; `all`: every value). A list with links matches on links, and its tags
 * are not looked at. A list with no criteria matches nothing.
 */
export const listMatches = (list: ListCriteria, notification: NotificationFacts): boolean =>
  hasCriteria(list) &&
  typeFieldHolds(list.documentType, notification.documentType) &&
  typeFieldHolds(list.emailDocumentSupertype, notification.emailDocumentSupertype) &&
  typeFieldHolds(list.governmentDocumentSupertype, notification.governmentDocumentSupertype) &&
  (list.contentId === null || list.contentId === notification.contentId) &&
  (list.links.size > 0
    ? everyCriterionHolds(list.links, notification.links)
    : everyCriterionHolds(list.tags, notification.tags))
