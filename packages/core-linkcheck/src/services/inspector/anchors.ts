import { Parser } from "htmlparser2"
import { MAX_ANCHOR_CHARACTERS, MAX_ANCHOR_LENGTH, MAX_ANCHORS } from "../../domain/fragments"

/**
 * Collects the anchors of an HTML page from its body as it arrives (a streaming tokenizer, no DOM): every `id`, and the
 * `name` of every `<a>`. It is done at `</body>`; a page with more anchors than `domain/fragments` allows gives none.
 */
export class AnchorCollector {
  private readonly anchors = new Set<string>()
  private characters = 0
  private readonly decoder = new TextDecoder("utf-8")
  private readonly parser: Parser
  /** `</body>` was read, or the page has too many anchors to keep: nothing more is worth reading. */
  done = false
  private tooMany = false

  constructor() {
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
    this.parser.write(this.decoder.decode(chunk, { stream: true }))
  }

  /** The anchors once the whole body (or all of it up to `</body>`) was read; null if the page has too many. */
  finish(): ReadonlyArray<string> | null {
    if (!this.done) {
      this.parser.write(this.decoder.decode())
      this.parser.end()
    }
    return this.tooMany ? null : [...this.anchors]
  }
}
