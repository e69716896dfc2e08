// test-lane: light (reads recipe files and the host kernel's module tree; boots nothing)
/**
 * The docker template's image flavour against this host's kernel: the modules Docker needs are in it, each after
 * its dependencies and each with its file; the start script, daemon settings and compose plugin go where
 * start-docker and the docker CLI look; and the plugin answers the CLI's metadata call with the JSON it expects.
 * The template working in a VM is test/templates/docker-template.test.ts.
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DOCKER_MODULES_DIR, DOCKER_START_PATH, dockerFlavour } from '../../src/image/flavours.ts';
import { defaultRecipesDir } from '../../src/image/recipes.ts';

describe('the docker image flavour', () => {
  test('ships the modules Docker needs, dependencies first, with a file for each', async () => {
    const flavour = await dockerFlavour();
    assert.equal(flavour.name, 'docker');
    assert.equal(flavour.diskSizeGiB, 4);
    for (const name of ['docker.io', 'containerd', 'runc', 'iptables', 'docker-compose', 'busybox-static']) assert.ok(flavour.packages.includes(name), name);
    const files = new Map(flavour.files.map((file) => [file.path, file]));
    const order = String(files.get(`${DOCKER_MODULES_DIR}/load-order`)?.content ?? '')
      .split('\n')
      .filter(Boolean);
    for (const name of ['overlay', 'bridge', 'br_netfilter', 'veth', 'nf_tables', 'nft_compat', 'nf_nat', 'xt_MASQUERADE', 'xt_addrtype', 'xt_conntrack']) {
      assert.ok(order.includes(name), `${name} is loaded (load order: ${order.join(' ')})`);
    }
    const before = (a: string, b: string) => assert.ok(order.indexOf(a) < order.indexOf(b), `${a} before ${b}`);
    before('stp', 'bridge');
    before('bridge', 'br_netfilter');
    before('nf_tables', 'nft_compat');
    before('nf_conntrack', 'nf_nat');
    for (const name of order) {
      const file = files.get(`${DOCKER_MODULES_DIR}/${name}.ko`);
      assert.ok(file && file.content.subarray(0, 4).equals(Buffer.from('\x7fELF', 'latin1')), `${name}.ko is an ELF module`);
    }
    assert.equal(files.get(DOCKER_START_PATH)?.mode, 0o755);
    assert.equal(files.get('/usr/libexec/docker/cli-plugins/docker-compose')?.mode, 0o755);
    assert.equal(JSON.parse(String(files.get('/etc/docker/daemon.json')?.content))['storage-driver'], 'overlay2');
  });

  test('the compose plugin answers the docker CLI with its metadata', () => {
    const out = execFileSync('sh', [join(defaultRecipesDir(), 'docker/compose-plugin'), 'docker-cli-plugin-metadata'], { encoding: 'utf8' });
    const metadata = JSON.parse(out) as Record<string, string>;
    assert.equal(metadata.SchemaVersion, '0.1.0');
    assert.equal(metadata.Version, '1.29.2');
    assert.ok(metadata.Vendor && metadata.ShortDescription);
  });
});
