/** Version of this SDK; sent in the `User-Agent` header. Kept equal to `package.json` by a unit test. */
export const SDK_VERSION = '0.2.0';
