/**
 * Certificates for tests that speak TLS as a real cluster does, made with the openssl command at
 * test start (nothing checked in, nothing reused across runs): certificate authorities, server
 * certificates with the names they cover, client certificates naming a user (CN) and groups (O),
 * and certificates whose validity ended long ago. EC P-256 keys: quick to make.
 */
import { execFileSync } from "node:child_process"
import { X509Certificate } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export interface Authority {
  readonly name: string
  readonly certFile: string
  readonly keyFile: string
  readonly certPem: string
}

export interface Issued {
  readonly name: string
  readonly certFile: string
  readonly keyFile: string
  readonly certPem: string
  readonly keyPem: string
  /** As node:tls reports a peer's certificate (getPeerCertificate().fingerprint256). */
  readonly fingerprint: string
}

export interface IssueOptions {
  /** Subject common name: the user name of a client certificate. */
  readonly commonName: string
  /** Subject organisations: the groups of a client certificate. */
  readonly organizations?: ReadonlyArray<string>
  /** subjectAltName entries of a server certificate, e.g. ["IP:127.0.0.1", "DNS:localhost"]. */
  readonly altNames?: ReadonlyArray<string>
  readonly usage: "serverAuth" | "clientAuth"
  /** Valid only in 2020: expired. */
  readonly expired?: boolean
}

const keyAlgorithm = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

export class TestPki {
  readonly dir: string
  private serial = 1

  constructor(dir: string) {
    this.dir = dir
  }

  private openssl(args: ReadonlyArray<string>): void {
    execFileSync("openssl", args, { cwd: this.dir, stdio: ["ignore", "ignore", "pipe"] })
  }

  authority(name: string): Authority {
    const certFile = join(this.dir, `${name}.crt`)
    const keyFile = join(this.dir, `${name}.key`)
    this.openssl([
      "req",
      "-x509",
      ...keyAlgorithm,
      "-keyout",
      keyFile,
      "-out",
      certFile,
      "-days",
      "3",
      "-subj",
      `/CN=${name}`,
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign"
    ])
    return { name, certFile, keyFile, certPem: readFileSync(certFile, "utf8") }
  }

  issue(authority: Authority, name: string, options: IssueOptions): Issued {
    const certFile = join(this.dir, `${name}.crt`)
    const keyFile = join(this.dir, `${name}.key`)
    const requestFile = join(this.dir, `${name}.csr`)
    const extensionsFile = join(this.dir, `${name}.ext`)
    const subject = [`/CN=${options.commonName}`, ...(options.organizations ?? []).map((o) => `/O=${o}`)].join("")
    this.openssl(["req", "-new", ...keyAlgorithm, "-keyout", keyFile, "-out", requestFile, "-subj", subject])
    writeFileSync(
      extensionsFile,
      [
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature",
        `extendedKeyUsage=${options.usage}`,
        ...(options.altNames === undefined ? [] : [`subjectAltName=${options.altNames.join(",")}`])
      ].join("\n")
    )
    if (options.expired === true) this.signExpired(authority, requestFile, extensionsFile, certFile)
    else {
      this.openssl([
        "x509",
        "-req",
        "-in",
        requestFile,
        "-CA",
        authority.certFile,
        "-CAkey",
        authority.keyFile,
        "-set_serial",
        String(this.serial++),
        "-days",
        "2",
        "-extfile",
        extensionsFile,
        "-out",
        certFile
      ])
    }
    const certPem = readFileSync(certFile, "utf8")
    return {
      name,
      certFile,
      keyFile,
      certPem,
      keyPem: readFileSync(keyFile, "utf8"),
      fingerprint: new X509Certificate(certPem).fingerprint256
    }
  }

  /** `openssl ca` is the signer of OpenSSL 3.0 that takes explicit start and end dates. */
  private signExpired(authority: Authority, requestFile: string, extensionsFile: string, certFile: string): void {
    const database = join(this.dir, `${authority.name}.index`)
    const config = join(this.dir, `${authority.name}.ca.cnf`)
    const serial = join(this.dir, `${authority.name}.serial`)
    writeFileSync(database, "")
    writeFileSync(serial, "1000\n")
    writeFileSync(
      config,
      [
        "[ca]",
        "default_ca = local",
        "[local]",
        `database = ${database}`,
        `new_certs_dir = ${this.dir}`,
        `serial = ${serial}`,
        "default_md = sha256",
        "policy = anything",
        "unique_subject = no",
        "[anything]",
        "commonName = supplied",
        "organizationName = optional"
      ].join("\n")
    )
    this.openssl([
      "ca",
      "-batch",
      "-config",
      config,
      "-cert",
      authority.certFile,
      "-keyfile",
      authority.keyFile,
      "-in",
      requestFile,
      "-out",
      certFile,
      "-extfile",
      extensionsFile,
      "-startdate",
      "20200101000000Z",
      "-enddate",
      "20200102000000Z",
      "-notext"
    ])
  }
}
