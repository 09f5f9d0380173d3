import type { Brand } from "effect"
import { Either, Schema } from "effect"

/** An email address as the service keeps it: checked, trimmed, its domain in lowercase ASCII (IDNA). */
export type EmailAddress = string & Brand.Brand<"EmailAddress">

/** An address the service refuses; nothing was changed. */
export class InvalidAddress extends Schema.TaggedError<InvalidAddress>()("InvalidAddress", {
  address: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return `address ${this.problem}`
  }
}

/** The characters of a local part that email providers accept without quoting (RFC 5322 atext and dots). */
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/
const DOMAIN_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/

/** The domain in lowercase ASCII (`bücher.example` -> `xn--bcher-kva.example`), or undefined if it is not a domain. */
const asciiDomain = (domain: string): string | undefined => {
  if (domain === "" || /[\s/\\?#@:[\]%]/.test(domain)) return undefined
  if (!URL.canParse(`http://${domain}`)) return undefined
  const hostname = new URL(`http://${domain}`).hostname
  const labels = hostname.split(".")
  return labels.length >= 2 && labels.every((label) => DOMAIN_LABEL.test(label)) && !/^\d+$/.test(labels.at(-1)!)
    ? hostname
    : undefined
}

/**
 * Checks an address and puts it in the form the service keeps: surrounding spaces removed, the domain lowercased
 * (and IDNA-encoded); the local part keeps its case. Addresses are ASCII once normalised, so `addressKey` agrees
 * with PostgreSQL's `lower()` in every locale.
 */
export const normaliseAddress = (input: string): Either.Either<EmailAddress, InvalidAddress> => {
  const refuse = (problem: string) => Either.left(new InvalidAddress({ address: input, problem }))
  const address = input.trim()
  const at = address.lastIndexOf("@")
  if (at <= 0 || at === address.length - 1) return refuse("must be an email address")
  const localPart = address.slice(0, at)
  if (localPart.length > 64 || !LOCAL_PART.test(localPart)) return refuse("must be an email address")
  const domain = asciiDomain(address.slice(at + 1))
  if (domain === undefined) return refuse("must be an email address")
  const normalised = `${localPart}@${domain}`
  return normalised.length > 254 ? refuse("must be at most 254 characters") : Either.right(normalised as EmailAddress)
}

/** Addresses are unique by this key: two addresses that differ only in case belong to one subscriber. */
export const addressKey = (address: string): string => address.toLowerCase()
