/** Types of rules-facts.mjs for its unit test. */
import type * as Contract from '../../functions/src/contract';

/** The contract module's exports (what the generated block is written from). */
export type ContractModule = typeof Contract;
export interface RulesFact {
  /** The rules function that returns it. */
  name: string;
  /** Where it comes from in the contract. */
  from: string;
  value: string | number | string[];
}
export declare const BEGIN_MARKER: string;
export declare const END_MARKER: string;
export declare function rulesPattern(regexp: RegExp): string;
export declare function codePointsPattern(max: number): string;
export declare function rulesFacts(contract: ContractModule): RulesFact[];
export declare function renderFactsBlock(contract: ContractModule): string;
export declare function renderRules(rulesText: string, contract: ContractModule): string;
