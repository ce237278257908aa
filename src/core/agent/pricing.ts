import { z } from 'zod';

/** The tokens one reply used, as the endpoint reported them. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
}

/** US dollars per million tokens. */
export const Price = z.strictObject({
  input: z.number().min(0),
  output: z.number().min(0),
  /** Prompt tokens served from the provider's cache, where it bills them lower. */
  cachedInput: z.number().min(0).optional(),
});
export type Price = z.infer<typeof Price>;

/** Model name (or name prefix) to price; the longest matching prefix wins. */
export const PriceTable = z.record(z.string().min(1), Price);
export type PriceTable = z.infer<typeof PriceTable>;

/**
 * OpenAI's published list prices (USD per million tokens) for common models; local
 * servers' models are free. Override or extend with a table of your own
 * (`--prices FILE` on the CLI), since prices change.
 */
export const DEFAULT_PRICES: PriceTable = {
  'gpt-4o': { input: 2.5, output: 10, cachedInput: 1.25 },
  'gpt-4o-mini': { input: 0.15, output: 0.6, cachedInput: 0.075 },
  'gpt-4.1': { input: 2, output: 8, cachedInput: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cachedInput: 0.1 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4, cachedInput: 0.025 },
  'o4-mini': { input: 1.1, output: 4.4, cachedInput: 0.275 },
  'gpt-5': { input: 1.25, output: 10, cachedInput: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cachedInput: 0.025 },
};

/** The price of `model`: an exact entry, else the longest prefix, else none (cost 0, reported as unpriced). */
export function priceOf(model: string, table: PriceTable): Price | undefined {
  if (table[model]) return table[model];
  const prefix = Object.keys(table)
    .filter((k) => model.startsWith(k))
    .sort((a, b) => b.length - a.length)[0];
  return prefix === undefined ? undefined : table[prefix];
}

export function costOf(usage: Usage, price: Price | undefined): number {
  if (!price) return 0;
  const cached = Math.min(usage.cachedPromptTokens, usage.promptTokens);
  const fresh = usage.promptTokens - cached;
  return (fresh * price.input + cached * (price.cachedInput ?? price.input) + usage.completionTokens * price.output) / 1e6;
}
