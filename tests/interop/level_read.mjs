// Reads a LevelDB directory through classic-level sublevels and prints JSON of
// what it sees: every sublevel's entries (keys and values hex, nested sublevels
// included, as abstract-level iterates them), point reads and range reads.
//
//   node level_read.mjs <node_modules dir> <db dir> <spec.json>
//
// spec: {"dump": [[path], ...],
//        "gets": [{"path": [...], "key": str}],               utf8 key and value
//        "ranges": [{"path": [...], "options": {...}}]}       utf8 range options
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const [modules, location, specFile] = process.argv.slice(2)
const require = createRequire(join(modules, 'index.js'))
const { ClassicLevel } = require('classic-level')

const spec = JSON.parse(readFileSync(specFile, 'utf8'))
const db = new ClassicLevel(location, { createIfMissing: false })
await db.open()

async function dump (level) {
  const out = []
  for await (const [k, v] of level.iterator({ keyEncoding: 'buffer', valueEncoding: 'buffer' })) {
    out.push([k.toString('hex'), v.toString('hex')])
  }
  return out
}

const sublevels = []
for (const path of spec.dump) {
  const sub = path.length ? db.sublevel(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' }) : db
  sublevels.push({ path, entries: await dump(sub) })
}
const gets = []
for (const { path, key } of spec.gets) {
  const value = await db.sublevel(path).get(key)
  gets.push({ path, key, value: value === undefined ? null : value })
}
const ranges = []
for (const { path, options } of spec.ranges) {
  ranges.push({ path, options, keys: await db.sublevel(path).keys(options).all() })
}
const root = await dump(db)
await db.close()
process.stdout.write(JSON.stringify({ sublevels, gets, ranges, root }))
