// Finding the `contextls` program: on PATH, else where `pipx` and `uv tool` install commands
// (an editor started from a desktop menu often lacks ~/.local/bin on its PATH). Pure: the file
// test and the environment are passed in.
import * as path from 'node:path';

export interface LocateEnv {
  readonly PATH?: string | undefined;
  readonly PATHEXT?: string | undefined;
  readonly PIPX_BIN_DIR?: string | undefined;
  readonly UV_TOOL_BIN_DIR?: string | undefined;
  readonly XDG_BIN_HOME?: string | undefined;
  readonly XDG_DATA_HOME?: string | undefined;
}

/**
 * The directories `pipx install` and `uv tool install` put commands in, in the order those tools
 * choose them: `$PIPX_BIN_DIR`, `$UV_TOOL_BIN_DIR`, `$XDG_BIN_HOME`, `$XDG_DATA_HOME/../bin`,
 * and `~/.local/bin`, the default of both.
 */
export function installDirs(env: LocateEnv, home: string): string[] {
  const dirs = [
    env.PIPX_BIN_DIR,
    env.UV_TOOL_BIN_DIR,
    env.XDG_BIN_HOME,
    env.XDG_DATA_HOME ? path.join(env.XDG_DATA_HOME, '..', 'bin') : undefined,
    path.join(home, '.local', 'bin'),
  ];
  const seen = new Set<string>();
  return dirs.filter((d): d is string => {
    if (!d) return false;
    const key = path.resolve(d);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export interface Located {
  readonly path: string;
  /** `path`: on PATH (or named by a path); `install-dir`: found where pipx or uv put it. */
  readonly via: 'path' | 'install-dir';
}

/** Where `program` is: by its own path, on PATH, then in the install dirs; undefined if nowhere. */
export function locateProgram(
  program: string,
  env: LocateEnv,
  home: string,
  isExecutable: (file: string) => boolean,
  platform: string = process.platform,
): Located | undefined {
  if (program.includes('/') || program.includes(path.sep)) return isExecutable(program) ? { path: program, via: 'path' } : undefined;
  const exts = platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  const delimiter = platform === 'win32' ? ';' : ':';
  const search = (dirs: readonly string[]): string | undefined => {
    for (const dir of dirs) {
      for (const ext of exts) {
        const candidate = path.join(dir, program + ext);
        if (isExecutable(candidate)) return candidate;
      }
    }
    return undefined;
  };
  const onPath = search((env.PATH ?? '').split(delimiter).filter(Boolean));
  if (onPath) return { path: onPath, via: 'path' };
  const installed = search(installDirs(env, home));
  return installed ? { path: installed, via: 'install-dir' } : undefined;
}

/** The directories searched, for the message that says contextls was not found. */
export function searchedPlaces(env: LocateEnv, home: string): string {
  const tilde = (d: string): string => (d.startsWith(home + path.sep) ? `~${d.slice(home.length)}` : d);
  return ['PATH', ...installDirs(env, home).map(tilde)].join(', ');
}
