/**
 * The console's Content-Security-Policy: the deployed one (firebase.json, which `firebase deploy`
 * serves) allows no local origin; the local stack's (firebase.local.json, written by
 * scripts/lib/local-firebase-config.mjs for `npm start` and `npm test`) adds exactly the emulators
 * the console reaches. The browser suites (test/integration/console/) check that the local policy
 * refuses nothing the console does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { contentSecurityPolicies, emulatorOrigins, localFirebaseConfig, withConnectSources, type FirebaseConfig } from '../../../scripts/lib/local-firebase-config.mjs';

const ROOT = join(__dirname, '..', '..', '..');
const firebaseJson = JSON.parse(readFileSync(join(ROOT, 'firebase.json'), 'utf8')) as FirebaseConfig;

/** The sources of one directive of a policy. */
function directive(policy: string, name: string): string[] {
  const found = policy
    .split(';')
    .map((d) => d.trim().split(/\s+/))
    .find(([n]) => n === name);
  if (!found) throw new Error(`no ${name} in ${policy}`);
  return found.slice(1);
}

describe('the deployed policy (firebase.json)', () => {
  const policies = contentSecurityPolicies(firebaseJson);

  test("is the console page's, and it is served", () => {
    expect(policies).toHaveLength(1);
    expect(directive(policies[0]!, 'script-src')).toEqual(["'self'"]);
  });

  test('connects to its own origin and to Google over HTTPS only', () => {
    expect(directive(policies[0]!, 'connect-src')).toEqual(["'self'", 'https://*.googleapis.com', 'https://*.cloudfunctions.net']);
  });

  test('names no local origin and no plain-HTTP source anywhere', () => {
    for (const policy of policies) {
      expect(policy).not.toMatch(/localhost|127\.0\.0\.1|\[::1\]|0\.0\.0\.0/);
      expect(policy).not.toMatch(/(^|\s)http:/);
    }
  });

  test('is what the deploy workflow deploys: no other configuration is named', () => {
    const workflow = readFileSync(join(ROOT, '.github', 'workflows', 'deploy.yml'), 'utf8');
    const deploy = workflow.split('\n').filter((line) => line.includes('firebase deploy'));
    expect(deploy).toHaveLength(1);
    expect(deploy[0]).not.toMatch(/--config|-c\s/);
  });
});

describe("the local stack's policy (firebase.local.json)", () => {
  const local = localFirebaseConfig(firebaseJson);
  const emulators = firebaseJson.emulators ?? {};

  test("adds the Auth, Firestore and Functions emulators' origins, under both loopback names, to connect-src only", () => {
    const [deployed] = contentSecurityPolicies(firebaseJson);
    const [policy] = contentSecurityPolicies(local);
    const origins = emulatorOrigins(firebaseJson);
    expect(origins.sort()).toEqual(
      ['auth', 'firestore', 'functions'].flatMap((name) => [`http://127.0.0.1:${emulators[name]?.port}`, `http://localhost:${emulators[name]?.port}`]).sort(),
    );
    expect(directive(policy!, 'connect-src')).toEqual([...directive(deployed!, 'connect-src'), ...emulatorOrigins(firebaseJson)]);
    expect(policy).toBe(withConnectSources(deployed!, emulatorOrigins(firebaseJson)));
    // Every other directive as deployed.
    const others = (p: string) => p.split(';').map((d) => d.trim()).filter((d) => !d.startsWith('connect-src'));
    expect(others(policy!)).toEqual(others(deployed!));
  });

  test('changes nothing else in the configuration', () => {
    const strip = (config: Record<string, unknown>) => JSON.parse(JSON.stringify(config).replace(/"Content-Security-Policy","value":"[^"]*"/g, '"Content-Security-Policy","value":""')) as unknown;
    expect(strip(local)).toEqual(strip(firebaseJson));
  });

  test('a policy without connect-src is refused, not silently left strict', () => {
    expect(() => withConnectSources("default-src 'none'", ['http://127.0.0.1:1'])).toThrow('no connect-src');
  });
});
