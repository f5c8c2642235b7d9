// The person's grants for a routine, as the side panel offers and shows them (the host
// keeps them, host/ROUTINES.md): the sites its runs may act on without asking, and the
// steps whose submit they need not ask about ("don't ask again for this routine"),
// which hold only while the step submits where it did when recorded. Each choice is
// unchecked until the person checks it; grants that lapsed when the routine's file
// changed are offered again as they were, for the person to confirm.

/**
 * @typedef {{step: number, action: string, site: string, method: string,
 *            words: string}} GrantableSubmit a step that asked before a submit when
 *   recorded, with where that submit went
 * @typedef {{sites: string[], submits: GrantableSubmit[]}} Grantable
 * @typedef {{state: "none"|"granted"|"lapsed", sites: string[], unasked: number[]}} Grants
 * @typedef {{kind: "site", site: string, label: string, checked: boolean}
 *   | {kind: "submit", step: number, label: string, detail: string, checked: boolean}} Choice
 */

/**
 * What the person may grant a routine, each with its words and whether it is checked:
 * `grants` (what they granted, even if it lapsed) checks its own; none are by default.
 * @param {Grantable} grantable
 * @param {Grants|null} [grants]
 * @returns {Choice[]}
 */
export function grantChoices(grantable, grants = null) {
  const sites = new Set(grants?.sites ?? []);
  const unasked = new Set(grants?.unasked ?? []);
  return [
    ...grantable.sites.map((site) => ({
      kind: /** @type {const} */ ("site"), site, checked: sites.has(site),
      label: `Act on ${site} without asking`,
    })),
    ...grantable.submits.map((s) => ({
      kind: /** @type {const} */ ("submit"), step: s.step, checked: unasked.has(s.step),
      label: `Step ${s.step}: don't ask again for this routine`,
      detail: `${s.words} — only while it sends its form by ${s.method} to ${s.action}`,
    })),
  ];
}

/**
 * The grants the checked choices make, as `routine_save`'s `grant` and
 * `routine_grant` take them.
 * @param {Choice[]} choices
 * @returns {{sites: string[], unasked: number[]}}
 */
export function chosenGrants(choices) {
  return {
    sites: choices.flatMap((c) => (c.kind === "site" && c.checked ? [c.site] : [])),
    unasked: choices.flatMap((c) => (c.kind === "submit" && c.checked ? [c.step] : [])),
  };
}

/**
 * A routine's grants in a few words, for its line in the Routines list.
 * @param {Grants} grants
 */
export function grantsSummary(grants) {
  if (grants.state === "lapsed") {
    return "Allowed without asking: the routine changed since you allowed it; confirm again";
  }
  const sites = grants.state === "granted" ? grants.sites.length : 0;
  const submits = grants.state === "granted" ? grants.unasked.length : 0;
  if (!sites && !submits) return "Allowed without asking: nothing (it asks as any task)";
  const said = [];
  if (sites) said.push(`${sites} site${sites === 1 ? "" : "s"}`);
  if (submits) said.push(`${submits} submit${submits === 1 ? "" : "s"}`);
  return `Allowed without asking: ${said.join(", ")}`;
}

/**
 * What a run's record says of the steps that submitted without asking.
 * @param {number[]|undefined} unasked
 */
export function unaskedWords(unasked) {
  if (!unasked?.length) return "";
  const steps = unasked.length === 1 ? `step ${unasked[0]}` : `steps ${unasked.join(", ")}`;
  return `${steps} submitted without asking (you marked “don't ask again”)`;
}
