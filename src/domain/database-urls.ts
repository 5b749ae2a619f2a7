// Database URLs as operators write them: one URL, a libpq multi-host URL (`postgres://u@h1:5432,h2:5433/db`,
// which WHATWG URL parsing rejects) or, for DATABASE_READ_URLS, a comma-separated list of either. Every
// host becomes a URL of its own: the gateway routes between servers itself instead of letting the driver
// pick one.

const scheme = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(.*)$/i;

/** One URL per host; throws with a message naming the problem when a part is not a valid URL. */
export function expandHosts(url: string): string[] {
  const match = scheme.exec(url.trim());
  if (!match) throw new Error('must be a postgres:// or postgresql:// URL');
  const [, prefix, userinfo, hostList, rest] = match;
  const hosts = hostList!.split(',').map((h) => h.trim());
  if (hosts.some((h) => h === '')) throw new Error('has an empty host in its host list');
  return hosts.map((host) => {
    const one = `${prefix}${userinfo !== undefined ? `${userinfo}@` : ''}${host}${rest}`;
    try {
      new URL(one);
    } catch {
      throw new Error(`host "${host}" does not make a valid URL`);
    }
    return one;
  });
}

/** A comma-separated list of (possibly multi-host) URLs: a new URL starts at each `postgres://`. */
export function expandUrlList(list: string): string[] {
  return list.split(/,\s*(?=postgres(?:ql)?:\/\/)/i).filter((part) => part.trim() !== '').flatMap(expandHosts);
}

/** `host:port` of a single-host URL, for logs and metric labels: never the credentials or the database. */
export function hostLabel(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '5432'}`;
}
