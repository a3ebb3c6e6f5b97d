package verdict

// Notes of a gate merged from shards (package rounds' Merge).
const (
	NoteShardMissing NoteCode = "shard_missing"  // Shard ("K/N"): no record arrived; judged on the others
	NoteShardFailed  NoteCode = "shard_failed"   // Shard, Detail: it stopped or its rounds do not read
	NoteShardsTooFew NoteCode = "shards_too_few" // Shards of Shard (N) below MinShards, Rounds: unusable
)
