// Words this surface says of what the server told as data. Pure: the unit tests run it under node.

/** "a, b and c". */
export function listed(parts: readonly string[]): string {
  return parts.length <= 1 ? (parts[0] ?? '') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1) ?? ''}`;
}

/** One notification for every kind of secret one item seems to hold. */
export function secretNotice(where: string, kinds: readonly string[]): string {
  return `contextls: ${where} seems to contain ${listed(kinds)}; it is now in the context a model will see. Forget it for good if it should not be there.`;
}
