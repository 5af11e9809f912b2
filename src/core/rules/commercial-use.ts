// Whether a license allows commercial use, from its short name: the one rule
// behind commercial_use_allowed in collection details, license breakdowns and
// what the downloader reports. Pure: no engine.

/**
 * False for non-commercial licenses (an NC element, as in CC BY-NC 4.0), true
 * for the licenses known to permit it (CC BY, CC0, public-domain and open-data
 * licenses), null when the license is missing or not recognised.
 */
export function commercialUseAllowed(shortName: string | null): boolean | null {
  if (shortName === null || shortName.trim() === '') return null;
  if (/(^|[^A-Za-z])NC([^A-Za-z]|$)/i.test(shortName)) return false;
  if (/^(CC[ -]?BY|CC0|CC[ -]?ZERO|PDDL|ODC[ -]?BY|ODbL|Public Domain)/i.test(shortName.trim())) return true;
  return null;
}
