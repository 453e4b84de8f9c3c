/** Types of sdk-generate.mjs for its unit test. */
export declare const CONTRACT_FILE: string;
export declare const API_FILE: string;
export declare function generateContract(source?: string): string;
export declare function generateApi(openapiYaml?: string): string;
