import { statements } from "./statements"

/**
 * Links into a section of a page share the check of the page: a check may read the page's anchors (`reads_anchors`)
 * and keeps them (`anchors`, a JSON array of strings, bounded); a batch's link keeps its fragment, so that its uri is
 * the page's plus `#fragment`; a batch says whether its fragments are judged, and whether it has links with one (its
 * webhook report is then built outside the database). Batches made before this judge no fragment.
 */
export const checkFragments = statements(
  `ALTER TABLE linkcheck.checks ADD COLUMN reads_anchors boolean NOT NULL DEFAULT false, ADD COLUMN anchors jsonb`,
  `ALTER TABLE linkcheck.batch_links ADD COLUMN fragment text`,
  `ALTER TABLE linkcheck.batches ADD COLUMN check_fragments boolean NOT NULL DEFAULT false,
    ADD COLUMN has_fragment_links boolean NOT NULL DEFAULT false`
)
