// The release picker: shown only when the server serves several releases.
// Choosing one reloads the page on it with the same cohort in the URL (every
// cache of the page belongs to one release), and a link that names a release
// the server does not serve says so.

import type { Version } from '../api.ts';

export function ReleasePicker(props: { version: Version; note: string | null }) {
  const served = props.version.releases ?? [];
  const choose = (release: string) => {
    const q = new URLSearchParams(location.search);
    q.set('release', release);
    location.assign(`/?${q.toString()}`);
  };
  return (
    <>
      {served.length > 1 ? (
        <label class="release-picker">
          <span>Release</span>
          <select value={props.version.idc_index_data_version} onChange={(e) => choose((e.currentTarget as HTMLSelectElement).value)}>
            {served.map((r) => (
              <option key={r.release} value={r.release}>
                {r.idc_version} ({r.release}){r.default ? ', newest' : ''}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {props.note ? (
        <p class="release-note" role="status">
          {props.note}
        </p>
      ) : null}
    </>
  );
}
