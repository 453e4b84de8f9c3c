/** Types of rules-facts.mjs for its unit test. */
import type * as Contract from '../../functions/src/contract';

/** The contract module's exports (what the generated block is written from). */
export type ContractModule = Omit<typeof Contract, 'TEMPLATE_MAX_PARAMS'> & { TEMPLATE_MAX_PARAMS: number };
export interface RulesFact {
  /** The rules function that returns it. */
  name: string;
  /** Where it comes from in the contract. */
  from: string;
  /** A value fact's value (absent on a function fact). */
  value?: string | number | string[];
  /** A function fact's parameters, e.g. `p, names` (absent on a value fact). */
  params?: string;
  /** A function fact's body: its `&&`-joined conditions, unrolled from a contract count. */
  body?: string[];
}
export declare const BEGIN_MARKER: string;
export declare const END_MARKER: string;
export declare function rulesPattern(regexp: RegExp): string;
export declare function codePointsPattern(max: number): string;
export declare function rulesFacts(contract: ContractModule): RulesFact[];
export declare function renderFactsBlock(contract: ContractModule): string;
export declare function renderRules(rulesText: string, contract: ContractModule): string;
