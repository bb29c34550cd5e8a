/** The text of a thrown value, for logs and health details: its message, or the value as text. */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
