/**
 * Token estimate for text whose real count the backend never reported (a stream that broke before its final
 * line). About four characters a token holds for English with the common BPE vocabularies; it is recorded as an
 * estimate, never passed off as a count.
 */
export function estimateTokens(chars: number): number {
  return chars > 0 ? Math.ceil(chars / 4) : 0;
}
