/**
 * New embedded databases start as a copy of a template cluster instead of running initdb.
 *
 * PGlite creates a cluster by running initdb inside WebAssembly: about 3 s on the bench machine,
 * most of an embedded first start and of every in-memory test database. Copying the files of a
 * cluster made earlier takes 0.2 s, loading them into memory 0.6 s (docs/decisions.md). The
 * template is a fresh cluster, before any migration, made once per PGlite version under
 * node_modules/.cache; migrations then run on the copy as on any new database.
 */
import { randomBytes } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync, gzipSync } from 'node:zlib'
import { PGlite } from '@electric-sql/pglite'

const pgliteRoot = path.resolve(path.dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite'))), '..')
const pgliteVersion = (JSON.parse(readFileSync(path.join(pgliteRoot, 'package.json'), 'utf8')) as { version: string }).version

/** True when `dataDir` holds no cluster yet (PGlite would run initdb). */
export function isNewCluster(dataDir: string): boolean {
  return dataDir === 'memory://' || !existsSync(path.join(dataDir, 'PG_VERSION'))
}

export interface ClusterTemplate {
  /** Makes the template if it is missing; false when it cannot be kept (a read-only install). */
  ensure(): Promise<boolean>
  /**
   * Puts the template's files in `dataDir`; for `memory://`, returns them as the tar PGlite's
   * `loadDataDir` takes, uncompressed because PGlite unpacks faster than it gunzips (zlib: 0.1 s).
   */
  copyTo(dataDir: string): Blob | undefined
}

/** A template kept in `dir`: the cluster as a directory, and as a tar for in-memory databases. */
export function clusterTemplate(dir: string): ClusterTemplate {
  const cluster = path.join(dir, 'cluster')
  const tarFile = path.join(dir, 'cluster.tar.gz')
  return {
    async ensure() {
      if (existsSync(dir)) return true
      // Built aside and renamed into place in one step: databases opening together never see half
      // a template, and the directory and the tar are always the same cluster.
      const building = `${dir}.${randomBytes(6).toString('hex')}`
      try {
        mkdirSync(building, { recursive: true })
      } catch {
        return false // a read-only install
      }
      try {
        const pglite = await PGlite.create(path.join(building, 'cluster'))
        const tar = Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer())
        await pglite.close()
        writeFileSync(path.join(building, 'cluster.tar.gz'), gzipSync(tar, { level: 1 }))
        renameSync(building, dir)
        return true
      } catch {
        // Another database made it first.
        return existsSync(dir)
      } finally {
        rmSync(building, { recursive: true, force: true })
      }
    },
    copyTo(dataDir) {
      if (dataDir === 'memory://') return new Blob([gunzipSync(readFileSync(tarFile))])
      cpSync(cluster, dataDir, { recursive: true })
      return undefined
    },
  }
}

/** Beside the PGlite it was made with, so reinstalling or upgrading PGlite makes a new one. */
export const defaultTemplate = clusterTemplate(path.resolve(pgliteRoot, '..', '..', '.cache', 'resourceful', `pglite-${pgliteVersion}-template`))
