// Files whose names say they usually hold credentials (.env, keys, .netrc…): a folder add leaves
// them out (the server does), and adding one by name from the Explorer asks first. The names are
// the server's (contextls.core.secret_paths), mirrored here; a unit test holds the two lists equal.

const STEMS = ['credentials', 'secrets', 'secret'];
const EXTENSIONS = ['json', 'yaml', 'yml', 'toml', 'ini', 'env', 'txt', 'csv', 'xml'];

/** Names (lower-cased, shell patterns) of files that usually hold credentials. */
export const SECRET_FILE_PATTERNS: readonly string[] = [
  '.env',
  '.env.*',
  '*.env',
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  '*.jks',
  '*.keystore',
  'id_rsa*',
  'id_dsa*',
  'id_ecdsa*',
  'id_ed25519*',
  '.netrc',
  '_netrc',
  '.pgpass',
  '.envrc',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.htpasswd',
  'credentials',
  '*.credentials',
  ...STEMS.flatMap((stem) => EXTENSIONS.map((ext) => `${stem}.${ext}`)),
  '*.secret',
  '*.secrets',
  'service-account*.json',
  '*.tfvars',
];

/** Names that match the above but are meant to be shared: dotenv templates, public keys. */
export const NOT_SECRET_PATTERNS: readonly string[] = [...['example', 'sample', 'template', 'dist', 'defaults'].map((kind) => `.env.${kind}`), '*.pub'];

/** A shell pattern (`*`, `?`, `[…]`) as a regular expression over a whole name. */
function patternRegExp(pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern.charAt(i);
    if (c === '*') source += '.*';
    else if (c === '?') source += '.';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) source += '\\[';
      else {
        const body = pattern.slice(i + 1, end);
        source += `[${body.startsWith('!') ? '^' + body.slice(1) : body}]`;
        i = end;
      }
    } else source += c.replace(/[.+^${}()|\\/]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

const secret = SECRET_FILE_PATTERNS.map(patternRegExp);
const shared = NOT_SECRET_PATTERNS.map(patternRegExp);

/** Whether a file's name says it usually holds credentials (the server's rule). */
export function isSecretPath(path: string): boolean {
  const name = (path.split(/[/\\]/).pop() ?? '').toLowerCase();
  if (shared.some((re) => re.test(name))) return false;
  return secret.some((re) => re.test(name));
}
