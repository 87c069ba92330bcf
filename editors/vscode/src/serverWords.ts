// The server's messages read in this surface's words. Pure: the unit tests run it under node.

/** A warning that an item seems to hold a secret: where, and what kind. */
export interface SecretWarning {
  readonly where: string;
  readonly kind: string;
}

const SECRET = /^(?:contextls: )?(.+?) seems to contain (.+?); it is now in the context an LLM will see(?: \(.*\))?$/s;

/** The server's secret warning, taken apart; undefined for any other message. */
export function secretWarning(message: string): SecretWarning | undefined {
  const match = SECRET.exec(message);
  const where = match?.[1];
  const kind = match?.[2];
  return where && kind ? { where, kind } : undefined;
}

/** "a, b and c". */
export function listed(parts: readonly string[]): string {
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1) ?? ''}`;
}

/** One notification for every kind of secret one item seems to hold. */
export function secretNotice(where: string, kinds: readonly string[]): string {
  return `contextls: ${where} seems to contain ${listed(kinds)}; it is now in the context a model will see. Forget it for good if it should not be there.`;
}
