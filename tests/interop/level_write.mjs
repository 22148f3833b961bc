// Writes the entries of a JSON spec into a fresh LevelDB directory through
// classic-level sublevels, then prints what the root database holds.
//
//   node level_write.mjs <node_modules dir> <db dir> <spec.json>
//
// spec: {"entries": [{"path": [...], "array": bool, "batch": bool,
//                     "keyEncoding": "utf8"|"buffer"|"view", "key": str|hex,
//                     "valueEncoding": ..., "value": str|hex}],
//        "dump": [[path components], ...]}
// utf8 keys and values are JSON strings; buffer and view ones are hex.
// Entries marked "batch" are written together in one db.batch() with the
// sublevel option; the others with sublevel.put().
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const [modules, location, specFile] = process.argv.slice(2)
const require = createRequire(join(modules, 'index.js'))
const { ClassicLevel } = require('classic-level')

function encodeInput (encoding, text) {
  if (encoding === 'utf8') return text
  const buffer = Buffer.from(text, 'hex')
  return encoding === 'view' ? new Uint8Array(buffer) : buffer
}

function asBuffer (encoding, text) {
  return encoding === 'utf8' ? Buffer.from(text, 'utf8') : Buffer.from(text, 'hex')
}

function sublevelOf (db, entry) {
  const options = { keyEncoding: entry.keyEncoding, valueEncoding: entry.valueEncoding }
  const path = entry.path
  if (path.length === 0) return null
  if (entry.array) return db.sublevel(path, options)
  let level = db
  for (const name of path.slice(0, -1)) level = level.sublevel(name)
  return level.sublevel(path[path.length - 1], options)
}

async function dump (level) {
  const out = []
  for await (const [k, v] of level.iterator({ keyEncoding: 'buffer', valueEncoding: 'buffer' })) {
    out.push([k.toString('hex'), v.toString('hex')])
  }
  return out
}

const spec = JSON.parse(readFileSync(specFile, 'utf8'))
const db = new ClassicLevel(location)
await db.open()
const written = []
const batch = []
for (const entry of spec.entries) {
  const sub = sublevelOf(db, entry)
  const key = encodeInput(entry.keyEncoding, entry.key)
  const value = encodeInput(entry.valueEncoding, entry.value)
  const keyBytes = asBuffer(entry.keyEncoding, entry.key)
  const stored = sub === null ? keyBytes : sub.prefixKey(keyBytes, 'buffer')
  written.push({ path: entry.path, stored: Buffer.from(stored).toString('hex') })
  if (sub === null) {
    await db.put(key, value, { keyEncoding: entry.keyEncoding, valueEncoding: entry.valueEncoding })
  } else if (entry.batch) {
    batch.push({ type: 'put', sublevel: sub, key, value })
  } else {
    await sub.put(key, value)
  }
}
if (batch.length) await db.batch(batch)
const sublevels = []
for (const path of spec.dump) {
  const sub = path.length ? db.sublevel(path, { keyEncoding: 'buffer', valueEncoding: 'buffer' }) : db
  sublevels.push({ path, prefix: path.length ? Buffer.from(sub.prefix).toString('hex') : '', entries: await dump(sub) })
}
const root = await dump(db)
await db.close()
process.stdout.write(JSON.stringify({ written, root, sublevels }))
