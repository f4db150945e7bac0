import { existsSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { openDatabase, type Database } from '../../src/db/client.js'
import { clusterTemplate, isNewCluster } from '../../src/db/pglite-template.js'

/** initdb gives every cluster its own identifier; a copy keeps the template's. */
async function systemIdentifier(db: Database): Promise<string> {
  const rows = await db.query<{ id: string }>('SELECT system_identifier::text AS id FROM pg_control_system()', [])
  return rows[0]!.id
}

t.test('new embedded databases start as copies of one template cluster', async (t) => {
  const root = t.testdir()
  const dir = path.join(root, 'cache', 'template')
  const template = clusterTemplate(dir)
  t.same(await Promise.all([template.ensure(), template.ensure()]), [true, true], 'two databases priming it at once')
  t.ok(existsSync(path.join(dir, 'cluster', 'PG_VERSION')), 'kept as a cluster directory')
  t.ok(existsSync(path.join(dir, 'cluster.tar.gz')), 'and as a tar for in-memory databases')

  const dataDir = path.join(root, 'data')
  t.ok(isNewCluster(dataDir) && isNewCluster('memory://'))
  const onDisk = await openDatabase({ kind: 'pglite', dataDir }, template)
  const inMemory = await openDatabase({ kind: 'pglite', dataDir: 'memory://' }, template)
  t.teardown(() => inMemory.close())
  const id = await systemIdentifier(onDisk)
  t.equal(await systemIdentifier(inMemory), id, 'both are copies of the same cluster')
  t.notOk(isNewCluster(dataDir))

  // A directory that already holds a cluster is opened, never replaced by the template.
  await onDisk.query('CREATE TABLE kept (n int)', [])
  await onDisk.query('INSERT INTO kept VALUES (7)', [])
  await onDisk.close()
  const reopened = await openDatabase({ kind: 'pglite', dataDir }, template)
  t.teardown(() => reopened.close())
  t.same(await reopened.query('SELECT n FROM kept', []), [{ n: 7 }])
  t.equal(await systemIdentifier(reopened), id)
})

t.test('a template that cannot be kept falls back to creating the cluster', async (t) => {
  const root = t.testdir({ 'not-a-directory': 'a file' })
  const template = clusterTemplate(path.join(root, 'not-a-directory', 'template'))
  t.equal(await template.ensure(), false)
  const db = await openDatabase({ kind: 'pglite', dataDir: path.join(root, 'data') }, template)
  t.teardown(() => db.close())
  t.same(await db.query('SELECT 1 AS one', []), [{ one: 1 }], 'initdb ran instead')
})
