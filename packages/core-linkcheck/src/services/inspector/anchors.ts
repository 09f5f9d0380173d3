import { Parser } from "htmlparser2"
import { MAX_ANCHOR_CHARACTERS, MAX_ANCHOR_LENGTH, MAX_ANCHORS } from "../../domain/fragments"
import { pageEncoding } from "./pageEncoding"

/** Where the HTML standard's prescan looks for a `<meta>` that names the page's encoding. */
const PRESCAN_BYTES = 1024

/**
 * Collects the anchors of an HTML page from its body as it arrives (a streaming tokenizer, no DOM): every `id`, and the
 * `name` of every `<a>`. It is done at `</body>`; a page with more anchors than `domain/fragments` allows gives none.
 * The body is decoded in the page's encoding (`pageEncoding`), which may take its first kilobyte to find.
 */
export class AnchorCollector {
  private readonly anchors = new Set<string>()
  private characters = 0
  private decoder: TextDecoder | undefined
  private undecided: Array<Uint8Array> = []
  private undecidedBytes = 0
  private readonly parser: Parser
  /** `</body>` was read, or the page has too many anchors to keep: nothing more is worth reading. */
  done = false
  private tooMany = false

  /** `contentType`: the response's `Content-Type`, whose `charset` names the encoding unless the body has a BOM. */
  constructor(private readonly contentType: string | undefined) {
    this.parser = new Parser({
      onopentag: (name, attributes) => {
        if (attributes.id !== undefined) this.add(attributes.id)
        if (name === "a" && attributes.name !== undefined) this.add(attributes.name)
      },
      onclosetag: (name, isImplied) => {
        if (name === "body" && !isImplied) this.done = true
      }
    }, { decodeEntities: true })
  }

  private add(anchor: string): void {
    if (anchor === "" || this.done) return
    const kept = anchor.slice(0, MAX_ANCHOR_LENGTH)
    if (this.anchors.has(kept)) return
    this.anchors.add(kept)
    this.characters += kept.length
    if (this.anchors.size > MAX_ANCHORS || this.characters > MAX_ANCHOR_CHARACTERS) {
      this.tooMany = true
      this.done = true
    }
  }

  write(chunk: Uint8Array): void {
    if (this.done) return
    if (this.decoder !== undefined) return this.parser.write(this.decoder.decode(chunk, { stream: true }))
    this.undecided.push(chunk)
    this.undecidedBytes += chunk.length
    if (this.undecidedBytes >= PRESCAN_BYTES) this.decide()
  }

  /** Chooses the decoder from what has arrived, and parses it. */
  private decide(): void {
    const start = Buffer.concat(this.undecided)
    this.undecided = []
    this.decoder = new TextDecoder(pageEncoding(start.subarray(0, PRESCAN_BYTES), this.contentType))
    this.parser.write(this.decoder.decode(start, { stream: true }))
  }

  /** The anchors once the whole body (or all of it up to `</body>`) was read; null if the page has too many. */
  finish(): ReadonlyArray<string> | null {
    if (!this.done) {
      if (this.decoder === undefined) this.decide()
      if (!this.done) this.parser.write(this.decoder!.decode())
      this.parser.end()
    }
    return this.tooMany ? null : [...this.anchors]
  }
}
