/** Types of region.cjs for its unit test. */
export declare const REGION_SOURCE: string;
export declare function regionOf(text: string): string;
export declare const REGION: string;
