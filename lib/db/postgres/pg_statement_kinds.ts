/**
 * Which PostgreSQL statements a token may send at all, by allowlist: the
 * statements that read or change the connection's own database - its data
 * and its schema - and the transaction and session statements dbport's own
 * handling of a call already confines. Every other kind (a role, a database
 * or tablespace of the cluster, the server's settings, extensions,
 * languages, event triggers, replication, ownership, what a later object
 * grants) is the server administrator's, refused as reach whatever the
 * token: a write token on `test` dropped another database and role of the
 * same cluster, `ALTER DATABASE … SET statement_timeout = 1` stopped every
 * other client's work, and `DROP EXTENSION plpgsql CASCADE` removed the
 * owner's functions with the language (outsider stop 56).
 *
 * The finer checks of an allowed kind stay where they were (pg_parse.ts:
 * grants, role attributes, catalogs, foreign tables; pg_vet.ts: every
 * function and operator a statement reaches).
 *
 * @module
 */

type Node = Record<string, unknown>;

/** Statement kinds of the connection's own database, its data and schema. */
const DATABASE_STATEMENTS: ReadonlySet<string> = new Set([
  // Reads and data.
  "SelectStmt",
  "VariableShowStmt",
  "ExplainStmt",
  "InsertStmt",
  "UpdateStmt",
  "DeleteStmt",
  "MergeStmt",
  "TruncateStmt",
  "CreateTableAsStmt",
  "RefreshMatViewStmt",
  "CallStmt",
  "LockStmt",
  // The database's own schema (functions, triggers, rules, casts,
  // aggregates and operators are vetted by what they call).
  "CreateStmt",
  "AlterTableStmt",
  "IndexStmt",
  "ViewStmt",
  "CreateSeqStmt",
  "AlterSeqStmt",
  "CompositeTypeStmt",
  "CreateEnumStmt",
  "AlterEnumStmt",
  "CreateRangeStmt",
  "CreateDomainStmt",
  "AlterDomainStmt",
  "DefineStmt",
  "CreateFunctionStmt",
  "AlterFunctionStmt",
  "CreateTrigStmt",
  "RuleStmt",
  "CreatePolicyStmt",
  "AlterPolicyStmt",
  "CreateStatsStmt",
  "AlterStatsStmt",
  "CreateSchemaStmt",
  "CreateCastStmt",
  "AlterCollationStmt",
  "AlterTSConfigurationStmt",
  "AlterTSDictionaryStmt",
  "RenameStmt",
  "AlterObjectSchemaStmt",
  "CommentStmt",
  "DropStmt",
  "GrantStmt",
  "ReindexStmt",
  "ClusterStmt",
  "VacuumStmt",
  "ConstraintsSetStmt",
  // Parts of the statements above: a SQL function's `RETURN` body, a
  // PL/pgSQL assignment, `ALTER TABLE … REPLICA IDENTITY`.
  "ReturnStmt",
  "PLAssignStmt",
  "ReplicaIdentityStmt",
  // Transaction and session statements: a call runs in a transaction of
  // dbport's own on a session it cleans (`DISCARD ALL`) after every write.
  "TransactionStmt",
  "VariableSetStmt",
  "DiscardStmt",
  "PrepareStmt",
  "DeallocateStmt",
  "DeclareCursorStmt",
  "FetchStmt",
  "ClosePortalStmt",
  "ListenStmt",
  "UnlistenStmt",
  "NotifyStmt",
]);

/**
 * The objects of the connection's own database a `DROP`, `RENAME`, `ALTER
 * … SET SCHEMA` or `DEFINE` (CREATE AGGREGATE|OPERATOR|TYPE|COLLATION|TEXT
 * SEARCH CONFIGURATION) may name.
 */
const DATABASE_OBJECTS: ReadonlySet<string> = new Set([
  "OBJECT_TABLE",
  "OBJECT_VIEW",
  "OBJECT_MATVIEW",
  "OBJECT_INDEX",
  "OBJECT_SEQUENCE",
  "OBJECT_COLUMN",
  "OBJECT_ATTRIBUTE",
  "OBJECT_TABCONSTRAINT",
  "OBJECT_DOMCONSTRAINT",
  "OBJECT_TYPE",
  "OBJECT_DOMAIN",
  "OBJECT_SCHEMA",
  "OBJECT_FUNCTION",
  "OBJECT_PROCEDURE",
  "OBJECT_ROUTINE",
  "OBJECT_AGGREGATE",
  "OBJECT_OPERATOR",
  "OBJECT_TRIGGER",
  "OBJECT_RULE",
  "OBJECT_POLICY",
  "OBJECT_STATISTIC_EXT",
  "OBJECT_COLLATION",
  // Not OBJECT_CAST: DROP|COMMENT ON CAST (bigint AS int4) changes a
  // built-in cast, which the parser cannot tell from a user's
  // (outsider stop 57); CREATE CAST is a kind of its own, vetted.
  "OBJECT_TSCONFIGURATION",
  // Of a built-in template: its files (stop words, ispell) are read only
  // from the server's tsearch_data folder, by name (outsider stop 57).
  "OBJECT_TSDICTIONARY",
]);

/** What GRANT and REVOKE may grant on: the database's own objects. */
const GRANTED_OBJECTS: ReadonlySet<string> = new Set([
  "OBJECT_TABLE",
  "OBJECT_SEQUENCE",
  "OBJECT_COLUMN",
  "OBJECT_FUNCTION",
  "OBJECT_PROCEDURE",
  "OBJECT_ROUTINE",
  "OBJECT_SCHEMA",
  "OBJECT_TYPE",
  "OBJECT_DOMAIN",
]);

/** The field of a statement naming the kind of object it acts on. */
const OBJECT_FIELD: Readonly<Record<string, string>> = {
  DropStmt: "removeType",
  RenameStmt: "renameType",
  AlterObjectSchemaStmt: "objectType",
  DefineStmt: "kind",
  GrantStmt: "objtype",
  // A comment on a database or a role is shared by the whole cluster
  // (outsider stop 57).
  CommentStmt: "objtype",
};

/**
 * The transaction statements a call may send: those of a transaction that
 * ends with the session's. Not `PREPARE TRANSACTION`, which hands the
 * transaction to the server past the session, nor `COMMIT|ROLLBACK
 * PREPARED`, which ends one another session prepared.
 */
const SESSION_TRANSACTIONS: ReadonlySet<string> = new Set([
  "TRANS_STMT_BEGIN",
  "TRANS_STMT_START",
  "TRANS_STMT_COMMIT",
  "TRANS_STMT_ROLLBACK",
  "TRANS_STMT_SAVEPOINT",
  "TRANS_STMT_RELEASE",
  "TRANS_STMT_ROLLBACK_TO",
]);

/** How a message names the statements of the kinds it refuses. */
const STATEMENT_WORDS: Readonly<Record<string, string>> = {
  CreatedbStmt: "CREATE DATABASE",
  DropdbStmt: "DROP DATABASE",
  AlterDatabaseStmt: "ALTER DATABASE",
  AlterDatabaseSetStmt: "ALTER DATABASE … SET",
  AlterDatabaseRefreshCollStmt: "ALTER DATABASE … REFRESH COLLATION VERSION",
  CreateTableSpaceStmt: "CREATE TABLESPACE",
  DropTableSpaceStmt: "DROP TABLESPACE",
  AlterTableSpaceOptionsStmt: "ALTER TABLESPACE",
  AlterTableMoveAllStmt: "ALTER … ALL IN TABLESPACE",
  CreateRoleStmt: "CREATE ROLE",
  AlterRoleStmt: "ALTER ROLE",
  AlterRoleSetStmt: "ALTER ROLE … SET",
  DropRoleStmt: "DROP ROLE",
  ReassignOwnedStmt: "REASSIGN OWNED",
  DropOwnedStmt: "DROP OWNED",
  AlterOwnerStmt: "ALTER … OWNER TO",
  CheckPointStmt: "CHECKPOINT",
  CreateEventTrigStmt: "CREATE EVENT TRIGGER",
  AlterEventTrigStmt: "ALTER EVENT TRIGGER",
  CreatePublicationStmt: "CREATE PUBLICATION",
  AlterPublicationStmt: "ALTER PUBLICATION",
  AlterSubscriptionStmt: "ALTER SUBSCRIPTION",
  DropSubscriptionStmt: "DROP SUBSCRIPTION",
  CreateAmStmt: "CREATE ACCESS METHOD",
  CreateTransformStmt: "CREATE TRANSFORM",
  CreateConversionStmt: "CREATE CONVERSION",
  CreateOpClassStmt: "CREATE OPERATOR CLASS",
  CreateOpFamilyStmt: "CREATE OPERATOR FAMILY",
  AlterOpFamilyStmt: "ALTER OPERATOR FAMILY",
  AlterOperatorStmt: "ALTER OPERATOR … SET",
  AlterTypeStmt: "ALTER TYPE … SET",
  AlterDefaultPrivilegesStmt: "ALTER DEFAULT PRIVILEGES",
  SecLabelStmt: "SECURITY LABEL",
  AlterExtensionContentsStmt: "ALTER EXTENSION … ADD|DROP",
  AlterObjectDependsStmt: "ALTER … DEPENDS ON EXTENSION",
  DropUserMappingStmt: "DROP USER MAPPING",
  ExecuteStmt: "EXECUTE (a prepared statement dbport did not read)",
};

/** The verb a message names for a statement acting on an object kind. */
const OBJECT_VERBS: Readonly<Record<string, string>> = {
  DropStmt: "DROP",
  RenameStmt: "ALTER … RENAME of a",
  AlterObjectSchemaStmt: "ALTER … SET SCHEMA of a",
  DefineStmt: "CREATE",
  GrantStmt: "GRANT|REVOKE … ON",
  CommentStmt: "COMMENT ON",
};

/** A statement kind in words (`AlterRoleSetStmt`: ALTER ROLE … SET). */
function spoken(kind: string): string {
  return STATEMENT_WORDS[kind] ??
    kind.replace(/Stmt$/, "").replace(/([a-z])([A-Z])/g, "$1 $2")
      .toUpperCase();
}

/** An object kind in words (`OBJECT_FOREIGN_SERVER`: FOREIGN SERVER). */
function objectWords(type: string): string {
  const words = type.replace(/^OBJECT_/, "").replaceAll("_", " ");
  if (words === "FDW") return "FOREIGN DATA WRAPPER";
  return words.replace(/^TS/, "TEXT SEARCH ");
}

const ADMINISTRATOR =
  "dbport's tokens read and change the connection's own database (its data and schema) only; the rest is the server administrator's";

/**
 * Why a statement of `kind` acts outside the connection's own database, or
 * null when its kind is one a token may send (its finer checks are made
 * elsewhere).
 */
export function outsideDatabase(kind: string, body: Node): string | null {
  if (kind === "") return null;
  if (!DATABASE_STATEMENTS.has(kind)) {
    return `${
      spoken(kind)
    } acts outside the connection's own database; ${ADMINISTRATOR}`;
  }
  const field = OBJECT_FIELD[kind];
  if (field !== undefined) {
    const type = String(body[field] ?? "");
    const allowed = kind === "GrantStmt" ? GRANTED_OBJECTS : DATABASE_OBJECTS;
    if (!allowed.has(type)) {
      return `${OBJECT_VERBS[kind]} ${
        objectWords(type)
      } acts outside the connection's own database; ${ADMINISTRATOR}`;
    }
  }
  if (
    kind === "TransactionStmt" &&
    !SESSION_TRANSACTIONS.has(String(body.kind ?? ""))
  ) {
    return `PREPARE TRANSACTION, COMMIT PREPARED and ROLLBACK PREPARED act past the session: a prepared transaction outlives dbport's session (and a restart of the server), holding its locks and the rows it wrote until someone commits or rolls it back by name, and COMMIT|ROLLBACK PREPARED ends one that another session prepared; a call's transaction ends with the call; ${ADMINISTRATOR}`;
  }
  if (kind === "CreateSchemaStmt" && ownedByAnother(body)) {
    return `CREATE SCHEMA … AUTHORIZATION hands the schema, and what it creates, to another role, which is the server administrator's to decide; ${ADMINISTRATOR}`;
  }
  if (kind === "AlterTableStmt" && changesOwner(body)) {
    return `ALTER … OWNER TO hands an object to another role, which is the server administrator's to decide; ${ADMINISTRATOR}`;
  }
  return null;
}

/** Whether an `ALTER TABLE|VIEW|SEQUENCE …` changes the object's owner. */
function changesOwner(body: Node): boolean {
  const commands = Array.isArray(body.cmds) ? body.cmds : [];
  return commands.some((command) =>
    ((command as Node)?.AlterTableCmd as Node | undefined)?.subtype ===
      "AT_ChangeOwner"
  );
}

/**
 * Whether `CREATE SCHEMA … AUTHORIZATION` names a role (rather than
 * CURRENT_USER, CURRENT_ROLE or SESSION_USER, the login itself): the schema
 * and the objects it creates belong to that role (outsider stop 57).
 */
function ownedByAnother(body: Node): boolean {
  // A bare RoleSpec's fields (libpg_query 18), or one under its node name.
  const role = body.authrole as Node | undefined;
  const spec = (role?.RoleSpec as Node | undefined) ?? role;
  return spec?.roletype === "ROLESPEC_CSTRING";
}
