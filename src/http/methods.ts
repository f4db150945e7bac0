/** Methods that change nothing (RFC 9110 §9.2.1): what a write is not. */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS'])
