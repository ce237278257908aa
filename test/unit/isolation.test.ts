import { strict as assert } from 'node:assert';
import { localIsolation, requireIsolation } from '../../src/core/sandbox/isolation';
import { meetsIsolation, weakestIsolation } from '../../src/core/sandbox/levels';

describe('sandbox isolation levels', () => {
  it('ranks bwrap and docker alike, above the permission model, above none', () => {
    assert.ok(meetsIsolation('docker', 'bwrap') && meetsIsolation('bwrap', 'docker'));
    assert.ok(meetsIsolation('bwrap', 'node-permission') && !meetsIsolation('node-permission', 'bwrap'));
    assert.ok(!meetsIsolation('none', 'node-permission'));
    assert.equal(weakestIsolation(['bwrap', 'node-permission', 'docker']), 'node-permission');
    assert.equal(weakestIsolation(['bwrap', 'none']), 'none');
    assert.equal(weakestIsolation(['docker', 'docker']), 'docker');
    assert.equal(weakestIsolation([undefined, 'docker', undefined]), 'docker');
    assert.equal(weakestIsolation([]), undefined);
  });

  it('takes DDBENCH_ISOLATION when it names a level, and says what is wrong when it does not', () => {
    assert.equal(localIsolation({ DDBENCH_ISOLATION: 'none' }), 'none');
    assert.throws(() => localIsolation({ DDBENCH_ISOLATION: 'chroot' }), /DDBENCH_ISOLATION=chroot is not one of bwrap, node-permission, none/);
  });

  it('lets a run through when it meets the requirement, and names both levels when not', () => {
    requireIsolation('bwrap', 'node-permission', 'verifying x');
    requireIsolation('none', undefined, 'verifying x');
    assert.throws(() => requireIsolation('node-permission', 'docker', 'verifying x'), /verifying x requires isolation docker, but runs here get node-permission/);
  });
});
