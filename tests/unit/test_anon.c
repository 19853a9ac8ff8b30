/* Unit tests for util/anon (vslint record --anonymize): what is learned from the answers is
 * replaced the same way everywhere, API words and markup are left alone, addresses keep their
 * prefixes, WWNs their first four bytes in every form vSphere and Unity write them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <libxml/parser.h>

#include "util/anon.h"
#include "util/buf.h"

/* A property read as vCenter answers it: names of a host, a VM with an ampersand, two
 * datastores (one called like the API's datastore type), a Fibre Channel port WWN positive and
 * one negative as xsd:long. */
static const char answer[] =
    "<RetrievePropertiesExResponse><returnval><objects>"
    "<obj type=\"HostSystem\">host-1</obj><propSet><name>name</name>"
    "<val xsi:type=\"xsd:string\">esx01.corp.example</val></propSet></objects>"
    "<objects><obj type=\"VirtualMachine\">vm-1</obj><propSet><name>name</name>"
    "<val xsi:type=\"xsd:string\">web &amp; db</val></propSet></objects>"
    "<objects><obj type=\"Datastore\">datastore-1</obj><propSet><name>name</name>"
    "<val xsi:type=\"xsd:string\">ds-gold</val></propSet>"
    "<propSet><name>summary</name><val><type>VMFS</type></val></propSet></objects>"
    "<objects><obj type=\"Datastore\">datastore-2</obj><propSet><name>name</name>"
    "<val xsi:type=\"xsd:string\">VMFS</val></propSet></objects>"
    "<objects><obj type=\"HostSystem\">host-1</obj><propSet><name>config</name><val>"
    "<portWorldWideName>2377900720054599681</portWorldWideName>"
    "<nodeWorldWideName>-6915838662598975927</nodeWorldWideName></val></propSet></objects>"
    "</returnval></RetrievePropertiesExResponse>";

static const char pools[] =
    "{\"entries\":[{\"content\":{\"id\":\"pool_1\",\"name\":\"pool-gold\"}}]}";

struct row {
    const char *in, *want;
};

/* Each row's text anonymized by a gives its want. */
static void check_rows(struct vsl_anon *a, const struct row *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct vsl_buf b;
        vsl_buf_init(&b, 1 << 20);
        assert_int_equal(vsl_anon_apply(a, 0, r[i].in, strlen(r[i].in), &b), 0);
        assert_string_equal(b.len ? b.data : "", r[i].want);
        vsl_buf_free(&b);
    }
}

static const struct row rows[] = {
    /* Names, in a path and escaped as XML text. */
    {"<fileName>[ds-gold] web &amp; db/web &amp; db.vmx</fileName>",
     "<fileName>[anon-ds-1] anon-vm-1/anon-vm-1.vmx</fileName>"},
    {"<name>esx01.corp.example</name>", "<name>anon-host-1.anon-dom-1.example</name>"},
    /* A name that is also an API word stays, as does the word. */
    {"<type>VMFS</type><name>VMFS</name>", "<type>VMFS</type><name>VMFS</name>"},
    /* Markup is never changed, only text; a name inside a longer word is not a name. */
    {"<val xsi:type=\"ds-gold\">ds-golden xds-gold</val>",
     "<val xsi:type=\"ds-gold\">ds-golden xds-gold</val>"},
    /* The esxcli answer: XML escaped inside XML text. */
    {"<response>&lt;Device&gt;web &amp;amp; db&lt;/Device&gt;</response>",
     "<response>&lt;Device&gt;anon-vm-1&lt;/Device&gt;</response>"},
    /* Addresses keep their prefixes; netmasks and version-like strings stay. */
    {"10.1.2.3 10.1.2.4 10.1.9.9 192.168.0.1 255.255.255.0 0.0.0.0 6.7.0.1.2",
     "10.1.1.1 10.1.1.2 10.1.2.1 11.1.1.1 255.255.255.0 0.0.0.0 6.7.0.1.2"},
    {"<ipAddress>10.1.2.3</ipAddress>", "<ipAddress>10.1.1.1</ipAddress>"},
    /* IQNs, the same one the same token. */
    {"iqn.1998-01.com.vmware:esx01 iqn.1992-04.com.emc:cx.a0. iqn.1998-01.com.vmware:esx01",
     "iqn.2000-01.org.example:anon-1 iqn.2000-01.org.example:anon-2. "
     "iqn.2000-01.org.example:anon-1"},
    /* WWNs as decimal longs (negative too), plain hex, colon hex, upper case. */
    {"<portWorldWideName>2377900720054599681</portWorldWideName>",
     "<portWorldWideName>2377900721910579201</portWorldWideName>"},
    {"<nodeWorldWideName>-6915838662598975927</nodeWorldWideName>",
     "<nodeWorldWideName>-6915838663257489406</nodeWorldWideName>"},
    {"fc.a0060160c7e01e49:2100001b32000001-naa.600601600000000000000000000000d1",
     "fc.a0060160a0a00002:2100001ba0a00001-naa.600601600000000000000000000000d1"},
    {"21:00:00:1b:32:00:00:01 A0:06:01:60:C7:E0:1E:49",
     "21:00:00:1b:a0:a0:00:01 A0:06:01:60:A0:A0:00:02"},
    /* An array's pool, learned from its REST answer. */
    {"<name>pool-gold</name>", "<name>anon-pool-1</name>"},
};

static void test_rows(void **state)
{
    struct vsl_anon *a = NULL;
    struct vsl_anon_stats s;

    assert_int_equal(vsl_anon_new(&a), 0);
    assert_int_equal(vsl_anon_learn(a, 0, "/sdk", answer, strlen(answer)), 0);
    assert_int_equal(vsl_anon_learn(a, 1, "/api/types/pool/instances", pools, strlen(pools)), 0);
    assert_int_equal(vsl_anon_seal(a), 0);
    check_rows(a, rows, sizeof(rows) / sizeof(rows[0]));
    vsl_anon_stats(a, &s);
    /* esx01.corp.example, esx01, corp.example, web & db, ds-gold, pool-gold */
    assert_int_equal(s.names, 6);
    assert_int_equal(s.kept_names, 1); /* VMFS */
    assert_int_equal(s.iqns, 2);
    assert_int_equal(s.wwns, 2);
    assert_int_equal(s.addresses, 4);
    vsl_anon_free(a);
}

/* JSON strings are replaced inside, and a JSON answer's names are found wherever they are. */
static void test_json(void **state)
{
    static const char lun[] = "{\"name\":\"lun \\\"prod\\\"\",\"pool\":{\"id\":\"pool_1\"}}";
    static const char in[] = "{\"name\":\"lun \\\"prod\\\"\",\"host\":\"10.0.0.5\"}";
    struct vsl_anon *a = NULL;
    struct vsl_buf b;

    assert_int_equal(vsl_anon_new(&a), 0);
    assert_int_equal(vsl_anon_learn(a, 1, "/api/types/lun/instances", lun, strlen(lun)), 0);
    assert_int_equal(vsl_anon_seal(a), 0);
    vsl_buf_init(&b, 1 << 20);
    assert_int_equal(vsl_anon_apply(a, 1, in, strlen(in), &b), 0);
    assert_string_equal(b.data, "{\"name\":\"anon-lun-1\",\"host\":\"10.1.1.1\"}");
    vsl_buf_free(&b);
    vsl_anon_free(a);
}

/* IPv6: the first 64 bits as a unit to 2001:db8:N::/64, the interface id as a unit under it,
 * so a vmknic and its target stay in one /64; written in the compressed form whatever form
 * it came in; times, MACs, colon-hex WWNs and XML namespaces are not addresses. */
static const struct row rows6[] = {
    {"<ipAddress>2001:db8:0:0::5</ipAddress>", "<ipAddress>2001:db8:0:1::1</ipAddress>"},
    /* The same address in its full form, the same token; its neighbour in the /64 too. */
    {"2001:0DB8:0000:0000:0000:0000:0000:0005 2001:db8::6", "2001:db8:0:1::1 2001:db8:0:1::2"},
    /* Another /64, a prefix length and a zone kept as they are. */
    {"fd12:3456:789a:1::10/64 fd12:3456:789a:2::10", "2001:db8:0:2::1/64 2001:db8:0:3::1"},
    /* Link-local: fe80::/64 is every link's, kept; the interface id (a MAC) is not. */
    {"fe80::250:56ff:fe6a:1%vmk1 fe80::250:56ff:fe6a:2", "fe80::1%vmk1 fe80::2"},
    /* In a URL, and the unspecified and loopback addresses, which say nothing. */
    {"https://[2001:db8::6]:443/sdk :: ::1", "https://[2001:db8:0:1::2]:443/sdk :: ::1"},
    /* Not IPv6 addresses (MACs are replaced as MACs). */
    {"12:30:45 aa:bb:cc:dd:ee:ff 00:50:56:6a:00:01 urn:vim25 2026-12-02T01:03:00Z",
     "12:30:45 aa:bb:cc:00:00:01 00:50:56:00:00:02 urn:vim25 2026-12-02T01:03:00Z"},
    {"de:ad:be:ef:00:11:22:33 1:2:3:4:5:6:7:8:9 cafe::1::2 12345::1",
     "de:ad:be:ef:00:11:22:33 1:2:3:4:5:6:7:8:9 cafe::1::2 12345::1"},
    /* A learned WWN in colon hex is still replaced as a WWN, not taken for an address. */
    {"21:00:00:1b:32:00:00:01", "21:00:00:1b:a0:a0:00:01"},
    /* An IPv4 tail: its octets are replaced as IPv4, the rest kept. */
    {"::ffff:192.0.2.7", "::ffff:10.1.1.1"},
};

static void test_ipv6(void **state)
{
    struct vsl_anon *a = NULL;
    struct vsl_anon_stats s;

    assert_int_equal(vsl_anon_new(&a), 0);
    assert_int_equal(vsl_anon_learn(a, 0, "/sdk", answer, strlen(answer)), 0);
    assert_int_equal(vsl_anon_seal(a), 0);
    check_rows(a, rows6, sizeof(rows6) / sizeof(rows6[0]));
    vsl_anon_stats(a, &s);
    assert_int_equal(s.addresses6, 6); /* ::5, ::6, two fd12 ones, two link-local */
    assert_int_equal(s.addresses, 1);
    vsl_anon_free(a);
}

/* A capture's answers learned from: SOAP ones (json 0) and REST ones (json 1, with a path). */
struct doc {
    int json;
    const char *path, *body;
};

static struct vsl_anon *learned(const struct doc *d, size_t n)
{
    struct vsl_anon *a = NULL;
    assert_int_equal(vsl_anon_new(&a), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(vsl_anon_learn(a, d[i].json, d[i].path, d[i].body, strlen(d[i].body)), 0);
    assert_int_equal(vsl_anon_seal(a), 0);
    return a;
}

/* in anonymized (json says how to read it) is want, and is still well-formed XML or JSON. */
static void check_one(struct vsl_anon *a, int json, const char *in, const char *want)
{
    struct vsl_buf b;
    vsl_buf_init(&b, 1 << 20);
    assert_int_equal(vsl_anon_apply(a, json, in, strlen(in), &b), 0);
    const char *got = b.len ? b.data : "";
    assert_string_equal(got, want);
    if (json) {
        json_t *j = json_loadb(got, b.len, 0, NULL);
        assert_non_null(j);
        json_decref(j);
    } else if (in[0] == '<') {
        xmlDoc *x = xmlReadMemory(got, (int)b.len, "t.xml", NULL,
                                  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
        assert_non_null(x);
        xmlFreeDoc(x);
    }
    vsl_buf_free(&b);
}

#define SOAP_OBJ(type, moref, props)                                                               \
    "<objects><obj type=\"" type "\">" moref "</obj>" props "</objects>"
#define PROP(name, val) "<propSet><name>" name "</name><val>" val "</val></propSet>"

/* Issue 25, leak 1: the array's host name in every Unity answer's @base and @id, and in any
 * URL elsewhere, is replaced the same way; keys and ids stay. */
static void test_url_hosts(void **state)
{
    static const struct doc docs[] = {
        {1, "/api/types/pool/instances",
         "{\"@base\":\"https://unity01.corp.example:443/api/types/pool/instances?per_page=500\","
         "\"entries\":[{\"@id\":\"https://unity01.corp.example/api/instances/pool/pool_1\","
         "\"content\":{\"id\":\"pool_1\",\"name\":\"gold\"}}]}"},
    };
    struct vsl_anon *a = learned(docs, 1);
    check_one(
        a, 1, docs[0].body,
        "{\"@base\":\"https://anon-host-1.anon-dom-1.example:443/api/types/pool/instances"
        "?per_page=500\",\"entries\":[{\"@id\":\"https://anon-host-1.anon-dom-1.example/api"
        "/instances/pool/pool_1\",\"content\":{\"id\":\"pool_1\",\"name\":\"anon-pool-1\"}}]}");
    /* The same host in a SOAP answer's text, alone and with its domain. */
    check_one(a, 0, "<a><url>https://unity01.corp.example/x</url><b>unity01</b></a>",
              "<a><url>https://anon-host-1.anon-dom-1.example/x</url><b>anon-host-1</b></a>");
    vsl_anon_free(a);
}

/* Leak 2: a name the estate owns is replaced even when some other value equals it (an iSCSI
 * alias equal to the host's name, a datastore named like a NIC's summary); only the API's
 * words stay (a datastore called "active", as a path's state is). */
static void test_stop_list(void **state)
{
    static const struct doc docs[] = {
        {0, "/sdk",
         "<RetrievePropertiesExResponse><returnval>" SOAP_OBJ(
             "HostSystem", "host-1",
             PROP("name", "esx07") PROP("config.storageDevice.hostBusAdapter",
                                        "<HostHostBusAdapter><iScsiAlias>esx07</iScsiAlias>"
                                        "</HostHostBusAdapter>")
                 PROP("config.storageDevice.multipathInfo",
                      "<lun><path><pathState>active</pathState></path></lun>"))
             SOAP_OBJ("Datastore", "datastore-1", PROP("name", "gold"))
                 SOAP_OBJ("Datastore", "datastore-2", PROP("name", "active"))
                     SOAP_OBJ("VirtualMachine", "vm-9", PROP("name", "true")) SOAP_OBJ(
                         "VirtualMachine", "vm-1",
                         PROP("config.hardware.device",
                              "<VirtualDevice><deviceInfo><summary>gold</summary>"
                              "</deviceInfo></VirtualDevice>")) "</returnval>"
                                                                "</RetrievePropertiesExResponse>"},
    };
    struct vsl_anon *a = learned(docs, 1);
    struct vsl_anon_stats s;
    check_one(a, 0, "<r><iScsiAlias>esx07</iScsiAlias><name>esx07</name></r>",
              "<r><iScsiAlias>anon-host-1</iScsiAlias><name>anon-host-1</name></r>");
    check_one(a, 0, "<r><name>gold</name><summary>gold</summary></r>",
              "<r><name>anon-ds-1</name><summary>anon-ds-1</summary></r>");
    check_one(a, 0, "<r><name>active</name><pathState>active</pathState></r>",
              "<r><name>active</name><pathState>active</pathState></r>");
    check_one(a, 0, "<r><name>true</name><thinProvisioned>true</thinProvisioned></r>",
              "<r><name>true</name><thinProvisioned>true</thinProvisioned></r>");
    vsl_anon_stats(a, &s);
    assert_int_equal(s.names, 2);
    assert_int_equal(s.kept_names, 2);
    assert_string_equal(vsl_anon_kept(a, 0), "active");
    assert_string_equal(vsl_anon_kept(a, 1), "true");
    assert_null(vsl_anon_kept(a, 2));
    vsl_anon_free(a);
}

/* Leak 3: names outside "name" properties: iSCSI aliases, VMFS labels, NFS servers and export
 * paths, snapshots' names and descriptions, e-mail addresses, DNS domains, port groups and
 * vSwitches, and the Unity objects' names. */
static void test_names_elsewhere(void **state)
{
    static const struct doc docs[] = {
        {0, "/sdk",
         "<RetrievePropertiesExResponse><returnval>" SOAP_OBJ(
             "Datastore", "datastore-1",
             PROP("info", "<vmfs><type>VMFS</type><name>label-fin</name></vmfs>")
                 PROP("info.nas", "<nas><type>NFS</type><name>nfs-ds</name>"
                                  "<remoteHost>filer9.nfs.example</remoteHost>"
                                  "<remoteHostNames>filer9.nfs.example</remoteHostNames>"
                                  "<remotePath>/export/payroll</remotePath></nas>"))
             SOAP_OBJ("VirtualMachine", "vm-1",
                      PROP("snapshot", "<rootSnapshotList><name>pre-upgrade</name>"
                                       "<description>ticket 4711 for jdoe@corp.example"
                                       "</description></rootSnapshotList>"))
                 SOAP_OBJ("HostSystem", "host-1",
                          PROP("config.network", "<dnsConfig><hostName>esx01</hostName>"
                                                 "<domainName>lab.example</domainName></dnsConfig>"
                                                 "<portgroup><spec><name>pg-finance</name>"
                                                 "<vswitchName>vs-finance</vswitchName></spec>"
                                                 "</portgroup>")
                              PROP("config.storageDevice.multipathInfo",
                                   "<transport><address>10.0.1.22:3260</address></transport>"
                                   "<transport><address>target1.san.example:3260</address></"
                                   "transport>")) "</returnval></RetrievePropertiesExResponse>"},
        {1, "/api/types/nasServer/instances",
         "{\"entries\":[{\"content\":{\"id\":\"nas_1\",\"name\":\"nas-hr\"}}]}"},
        {1, "/api/types/filesystem/instances",
         "{\"entries\":[{\"content\":{\"id\":\"fs_1\",\"name\":\"fs-hr\"}}]}"},
        {1, "/api/types/nfsShare/instances",
         "{\"entries\":[{\"content\":{\"id\":\"NFSShare_1\",\"name\":\"share-hr\"}}]}"},
    };
    static const char *const originals[] = {
        "label-fin",   "nfs-ds",     "filer9",      "nfs.example",  "payroll",
        "pre-upgrade", "4711",       "jdoe",        "corp.example", "esx01",
        "lab.example", "pg-finance", "vs-finance",  "nas-hr",       "fs-hr",
        "share-hr",    "target1",    "san.example", "10.0.1.22",    NULL};
    struct vsl_anon *a = learned(docs, sizeof(docs) / sizeof(docs[0]));
    for (size_t d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
        struct vsl_buf b;
        vsl_buf_init(&b, 1 << 20);
        assert_int_equal(vsl_anon_apply(a, docs[d].json, docs[d].body, strlen(docs[d].body), &b),
                         0);
        for (size_t i = 0; originals[i]; i++)
            if (strstr(b.data, originals[i]))
                fail_msg("%s is left in %s", originals[i], b.data);
        vsl_buf_free(&b);
    }
    /* The API's words and the ids stay. */
    check_one(a, 0, "<nas><type>NFS</type><remotePath>/export/payroll</remotePath></nas>",
              "<nas><type>NFS</type><remotePath>/anon-path-1/anon-path-2</remotePath></nas>");
    /* An iSCSI target's address: a host name with a port is a host name, an address with a
     * port is an address. */
    check_one(a, 0,
              "<t><address>target1.san.example:3260</address>"
              "<address>10.0.1.22:3260</address></t>",
              "<t><address>anon-host-2.anon-dom-4.example:3260</address>"
              "<address>10.1.1.1:3260</address></t>");
    check_one(
        a, 1, "{\"id\":\"nas_1\",\"name\":\"nas-hr\",\"mail\":\"jdoe@corp.example\"}",
        "{\"id\":\"nas_1\",\"name\":\"anon-nas-1\",\"mail\":\"anon-user-1@anon-dom-1.example\"}");
    vsl_anon_free(a);
}

/* Leak 4: a host's FQDN, its short name and either in another case are one name. */
static void test_case_and_fqdn(void **state)
{
    static const struct doc docs[] = {
        {0, "/sdk",
         "<RetrievePropertiesExResponse><returnval>" SOAP_OBJ(
             "HostSystem", "host-1",
             PROP("name", "ESX01.corp.local")) "</returnval></RetrievePropertiesExResponse>"},
    };
    struct vsl_anon *a = learned(docs, 1);
    check_one(
        a, 0,
        "<r><a>ESX01.corp.local</a><b>esx01.CORP.LOCAL</b><c>esx01</c><d>Esx01</d>"
        "<e>ESX01</e><f>[ds] Esx01-local/x</f><g>CORP.LOCAL</g><h>esx01_rdm1.vmdk</h></r>",
        "<r><a>anon-host-1.anon-dom-1.example</a><b>anon-host-1.anon-dom-1.example</b>"
        "<c>anon-host-1</c><d>anon-host-1</d><e>ANON-HOST-1</e>"
        "<f>[ds] anon-host-1-local/x</f><g>ANON-DOM-1.EXAMPLE</g><h>anon-host-1_rdm1.vmdk</h></r>");
    vsl_anon_free(a);
}

/* Leak 5: a very short name is replaced where it is a whole value, never inside an entity, a
 * tag, an attribute's name or a JSON key, so the document stays valid. */
static void test_short_names(void **state)
{
    static const struct doc docs[] = {
        {0, "/sdk",
         "<RetrievePropertiesExResponse><returnval>" SOAP_OBJ("VirtualMachine", "vm-1",
                                                              PROP("name", "lt"))
             SOAP_OBJ("VirtualMachine", "vm-2",
                      PROP("name", "x")) "</returnval></RetrievePropertiesExResponse>"},
        {1, "/api/types/lun/instances", "{\"entries\":[{\"content\":{\"name\":\"gt\"}}]}"},
    };
    struct vsl_anon *a = learned(docs, 2);
    check_one(a, 0, "<lt lt=\"lt\"><x>lt</x><y>1 &lt; 2 &gt; 0</y><z>x</z><gt>gt</gt></lt>",
              "<lt lt=\"lt\"><x>anon-vm-1</x><y>1 &lt; 2 &gt; 0</y><z>anon-vm-2</z>"
              "<gt>anon-lun-1</gt></lt>");
    check_one(a, 1, "{\"lt\":\"lt\",\"gt\":[\"gt\",\"a \\u003c b\"],\"x\":{\"x\":\"x\"}}",
              "{\"lt\":\"anon-vm-1\",\"gt\":[\"anon-lun-1\",\"a \\u003c b\"],"
              "\"x\":{\"x\":\"anon-vm-2\"}}");
    /* Inside a longer text a two-letter name is taken for a word and left, but not in a
     * datastore path. */
    check_one(a, 0, "<p>lt, gt and x</p>", "<p>lt, gt and x</p>");
    check_one(a, 0, "<p>[gt] lt/lt.vmx</p>", "<p>[anon-lun-1] anon-vm-1/anon-vm-1.vmx</p>");
    vsl_anon_free(a);
}

/* Leak 6: MAC addresses keep their vendor's three bytes and their form (colons or dashes, the
 * case); the same MAC is the same everywhere. */
static void test_macs(void **state)
{
    static const struct doc docs[] = {{0, "/sdk", "<a/>"}};
    struct vsl_anon *a = learned(docs, 1);
    struct vsl_anon_stats s;
    check_one(a, 0,
              "<r><mac>00:50:56:6a:3b:1c</mac><m>00-50-56-6A-3B-1C</m><m>00:50:56:6a:3b:1d</m>"
              "<m>ec:f4:bb:01:02:03,00:50:56:6A:3B:1C</m><wwn>21:00:00:1b:32:00:00:01</wwn></r>",
              "<r><mac>00:50:56:00:00:01</mac><m>00-50-56-00-00-01</m><m>00:50:56:00:00:02</m>"
              "<m>ec:f4:bb:00:00:03,00:50:56:00:00:01</m><wwn>21:00:00:1b:32:00:00:01</wwn></r>");
    vsl_anon_stats(a, &s);
    assert_int_equal(s.macs, 3);
    vsl_anon_free(a);
}

/* Leak 7: esxcli's answer (XML inside XML text) gets the same tokens as the SOAP and REST
 * answers, its markup and entities kept, and stays an XML document once unescaped. */
static void test_nested_and_consistent(void **state)
{
    static const struct doc docs[] = {
        {0, "/sdk",
         "<RetrievePropertiesExResponse><returnval>" SOAP_OBJ("Datastore", "datastore-1",
                                                              PROP("name", "fin &amp; ops"))
             SOAP_OBJ("Datastore", "datastore-2", PROP("name", "ds &lt;Q3&gt; &amp; &lt;Ops&gt; x"))
                 SOAP_OBJ("VirtualMachine", "vm-1",
                          PROP("name", "summary")) "</returnval></RetrievePropertiesExResponse>"},
        {1, "/api/types/lun/instances", "{\"entries\":[{\"content\":{\"name\":\"fin & ops\"}}]}"},
        /* A request vslint sent: its words are the API's. */
        {0, "/sdk",
         "<Envelope><Body><RetrievePropertiesEx><pathSet>summary</pathSet>"
         "</RetrievePropertiesEx></Body></Envelope>"},
    };
    struct vsl_anon *a = learned(docs, 3);
    check_one(a, 0,
              "<response>&lt;?xml version=&#34;1.0&#34;?&gt;&#xA;&lt;obj a=&#34;lt&#34;&gt;"
              "&lt;Device&gt;fin &amp;amp; ops&lt;/Device&gt;&lt;/obj&gt;</response>",
              "<response>&lt;?xml version=\"1.0\"?&gt;\n&lt;obj a=\"lt\"&gt;"
              "&lt;Device&gt;anon-ds-2&lt;/Device&gt;&lt;/obj&gt;</response>");
    check_one(a, 1, "{\"name\":\"fin & ops\"}", "{\"name\":\"anon-ds-2\"}");
    /* Text with markup characters in it is text, not XML inside XML. */
    check_one(a, 0, "<r><name>ds &lt;Q3&gt; &amp; &lt;Ops&gt; x</name><s>summary</s></r>",
              "<r><name>anon-ds-1</name><s>summary</s></r>");
    /* A VM called like a word of a request is kept, or the replay would not know the request. */
    check_one(a, 0, docs[2].body, docs[2].body);
    vsl_anon_free(a);
}

/* Issue 25, second read, leak 1: every folder and file of a datastore path is a name, even
 * when it differs from its VM's; the extension and the suffixes the checks read stay (a
 * delta's "-000001", "-flat", "_1"), and a file named as its folder is one name. */
static void test_datastore_paths(void **state)
{
    static const struct doc docs[] = {
        {0, "/sdk",
         "<RetrievePropertiesExResponse><returnval>" SOAP_OBJ(
             "VirtualMachine", "vm-1",
             PROP("name", "fin-web")
                 PROP("layoutEx", "<file><name>[DS-Gold] FIN-Frankfurt-old/FIN-Frankfurt-old.vmx"
                                  "</name></file><file><name>[DS-Gold] FIN-Frankfurt-old/"
                                  "Payroll-disk_1-000002.vmdk</name></file>")
                     PROP("config.hardware.device",
                          "<backing><fileName>[ISO-Lib] images/SW_DVD_X.iso</fileName></backing>"
                          "<backing><fileName>[DS-Gold] web-000001/web-000001.vmdk</fileName>"
                          "</backing>")) "</returnval></RetrievePropertiesExResponse>"},
    };
    struct vsl_anon *a = learned(docs, 1);
    check_one(a, 0,
              "<r><f>[DS-Gold] FIN-Frankfurt-old/FIN-Frankfurt-old-000001.vmdk</f>"
              "<f>[DS-Gold] FIN-Frankfurt-old/FIN-Frankfurt-old-flat.vmdk</f>"
              "<f>[DS-Gold] FIN-Frankfurt-old/Payroll-disk_1-000002.vmdk</f>"
              "<f>[ISO-Lib] images/SW_DVD_X.iso</f>"
              "<f>[DS-Gold] web-000001/web-000001-000001.vmdk</f></r>",
              "<r><f>[anon-ds-1] anon-path-1/anon-path-1-000001.vmdk</f>"
              "<f>[anon-ds-1] anon-path-1/anon-path-1-flat.vmdk</f>"
              "<f>[anon-ds-1] anon-path-1/anon-path-3_1-000002.vmdk</f>"
              "<f>[anon-ds-2] anon-path-2/ANON-PATH-4.iso</f>"
              "<f>[anon-ds-1] anon-path-5/anon-path-5-000001.vmdk</f></r>");
    vsl_anon_free(a);
}

/* Leak 2: the vocabulary holds the API's enumerations and products, not free text: a cluster
 * "Management", a VM "Payroll" are replaced though a counter's label, a device's display
 * name or a request's inventory path holds the word; a device's display name is a name. */
static void test_narrow_vocabulary(void **state)
{
    static const struct doc docs[] = {
        {0, "/sdk",
         "<RetrievePropertiesExResponse><returnval>" SOAP_OBJ(
             "ClusterComputeResource", "domain-c1", PROP("name", "Management"))
             SOAP_OBJ("VirtualMachine", "vm-1", PROP("name", "Payroll"))
                 SOAP_OBJ("VirtualMachine", "vm-2", PROP("name", "Pure"))
                     SOAP_OBJ("HostSystem", "host-1",
                              PROP("config.storageDevice.scsiLun",
                                   "<scsiLun><displayName>Payroll LUN 7</displayName>"
                                   "<vendor>VMware</vendor></scsiLun>")) "</returnval>"
                                                                        "</RetrievePropertiesExResponse>"},
        {0, "/sdk",
         "<RetrieveResponse><returnval><nameInfo><label>Management</label>"
         "<summary>Payroll pure</summary></nameInfo></returnval></RetrieveResponse>"},
        {0, "/sdk",
         "<Envelope><Body><FindByInventoryPath><inventoryPath>dc/vm/Payroll Pure"
         "</inventoryPath></FindByInventoryPath></Body></Envelope>"},
        {0, "/sdk",
         "<Envelope><Body><ExecuteSoapResponse>&lt;Device&gt;&lt;DeviceDisplayName&gt;PURE Fibre Channel"
         " Disk&lt;/DeviceDisplayName&gt;&lt;Description&gt;Payroll&lt;/Description&gt;"
         "&lt;/Device&gt;</ExecuteSoapResponse></Body></Envelope>"},
    };
    struct vsl_anon *a = learned(docs, 4);
    check_one(a, 0, "<r><a>Management</a><b>Payroll</b><c>Pure</c><d>Payroll LUN 7</d></r>",
              "<r><a>anon-cluster-1</a><b>anon-vm-1</b><c>anon-vm-2</c><d>anon-lun-1</d></r>");
    check_one(a, 0, "<r><d>PURE Fibre Channel Disk</d><v>VMware</v></r>",
              "<r><d>anon-lun-2</d><v>VMware</v></r>");
    assert_null(vsl_anon_kept(a, 0));
    vsl_anon_free(a);
}

/* Leak 3: user names (an alarm acknowledged by CORP\jdoe, a CHAP name) are replaced. */
static void test_users(void **state)
{
    static const struct doc docs[] = {
        {0, "/sdk",
         "<RetrievePropertiesExResponse><returnval>" SOAP_OBJ(
             "Datastore", "datastore-1",
             PROP("triggeredAlarmState", "<AlarmState><acknowledgedByUser>CORP\\jdoe"
                                         "</acknowledgedByUser></AlarmState><AlarmState>"
                                         "<acknowledgedByUser>asmith@vsphere.local"
                                         "</acknowledgedByUser></AlarmState>"))
             SOAP_OBJ("HostSystem", "host-1",
                      PROP("config.storageDevice.hostBusAdapter",
                           "<authenticationProperties><chapName>chap-fin</chapName>"
                           "</authenticationProperties>")) "</returnval>"
                                                           "</RetrievePropertiesExResponse>"},
    };
    struct vsl_anon *a = learned(docs, 1);
    check_one(a, 0,
              "<r><u>CORP\\jdoe</u><u>jdoe</u><u>asmith@vsphere.local</u><c>chap-fin</c></r>",
              "<r><u>anon-user-4</u><u>anon-user-5</u><u>anon-user-2</u><c>anon-user-3</c></r>");
    vsl_anon_free(a);
}

/* Leak 4: runtime names (vmhba64:C0:T0:L1, vmhba64, vmnic0, vmk1) are never replaced, so the
 * checks still read a path's adapter and channel from them. */
static void test_runtime_names(void **state)
{
    static const struct doc docs[] = {
        {0, "/sdk",
         "<RetrievePropertiesExResponse><returnval>" SOAP_OBJ(
             "HostSystem", "host-1",
             PROP("config.storageDevice.multipathInfo",
                  "<lun><path><name>vmhba64:C0:T0:L1</name></path><path><name>vmhba64:C1:T0:L1"
                  "</name></path></lun>") PROP("config.network", "<pnic><name>vmnic0</name></pnic>"
                                                                 "<vnic><name>vmk1</name></vnic>"
                                                                 "<hba><name>vmhba64</name></hba>"))
             "</returnval></RetrievePropertiesExResponse>"},
    };
    struct vsl_anon *a = learned(docs, 1);
    struct vsl_anon_stats s;
    check_one(a, 0,
              "<r><p>vmhba64:C0:T0:L1</p><p>vmhba64:C1:T0:L1</p><n>vmnic0 vmk1 vmhba64</n></r>",
              "<r><p>vmhba64:C0:T0:L1</p><p>vmhba64:C1:T0:L1</p><n>vmnic0 vmk1 vmhba64</n></r>");
    vsl_anon_stats(a, &s);
    assert_int_equal(s.names, 0);
    assert_int_equal(s.kept_names, 0);
    vsl_anon_free(a);
}

/* Leak 5: an array's serial number becomes one of the same shape; a VMFS UUID's last twelve
 * digits (the MAC of the host that formatted it) are mapped as that MAC is, wherever the UUID
 * stands; vCenter's instance UUID is still a UUID. */
static void test_identifiers(void **state)
{
    static const struct doc docs[] = {
        {0, "/sdk",
         "<RetrievePropertiesExResponse><returnval>" SOAP_OBJ(
             "HostSystem", "host-1",
             PROP("config.storageDevice.scsiLun",
                  "<scsiLun><serialNumber>CKM00190812345</serialNumber></scsiLun>"))
             SOAP_OBJ("Datastore", "datastore-1",
                      PROP("info", "<vmfs><uuid>5f3e1a2b-c3d4e5f6-7890-001b21aabbcc</uuid></vmfs>"))
                 SOAP_OBJ("Datastore", "datastore-2",
                          PROP("info", "<vmfs><uuid>5f3e1a2c-c3d4e5f7-7891-001b21ddeeff</uuid>"
                                       "</vmfs>"))
             "</returnval></RetrievePropertiesExResponse>"},
        {0, "/sdk",
         "<RetrieveServiceContentResponse><returnval><about><instanceUuid>"
         "4f9c3a1e-1234-4cde-9abc-0123456789ab</instanceUuid></about></returnval>"
         "</RetrieveServiceContentResponse>"},
    };
    struct vsl_anon *a = learned(docs, 2);
    check_one(a, 0,
              "<r><s>CKM00190812345</s><u>4f9c3a1e-1234-4cde-9abc-0123456789ab</u>"
              "<v>5f3e1a2b-c3d4e5f6-7890-001b21aabbcc</v>"
              "<l>ds:///vmfs/volumes/5f3e1a2b-c3d4e5f6-7890-001b21aabbcc/</l>"
              "<m>00:1B:21:AA:BB:CC</m><w>5f3e1a2c-c3d4e5f7-7891-001b21ddeeff</w></r>",
              "<r><s>XXX00000000001</s><u>00000000-0000-4000-8000-000000000001</u>"
              "<v>5f3e1a2b-c3d4e5f6-7890-001b21000001</v>"
              "<l>ds:///vmfs/volumes/5f3e1a2b-c3d4e5f6-7890-001b21000001/</l>"
              "<m>00:1B:21:00:00:01</m><w>5f3e1a2c-c3d4e5f7-7891-001b21000002</w></r>");
    /* An id written as a VMFS UUID that is no volume's (a VVol container's) stays. */
    check_one(a, 0, "<c>vvol:5f3e1a2d-c3d4e5f7-7891-001b21aabbcc</c>",
              "<c>vvol:5f3e1a2d-c3d4e5f7-7891-001b21aabbcc</c>");
    vsl_anon_free(a);
}

/* Leak 6: a cut answer's last, incomplete text is blanked at its length, so a name cut at
 * the break ("[ds] Payroll-Ap", which no name matches) does not leave its prefix. */
static void test_blank_cut(void **state)
{
    static const struct {
        const char *in, *want;
        size_t blanked;
    } cuts[] = {
        {"<r><f>[ds] Payroll-Ap", "<r><f>xxxxxxxxxxxxxxx", 15},
        {"{\"a\":[\"x\"],\"name\":\"Payroll-Ap", "{\"a\":[\"x\"],\"name\":xxxxxxxxxxx", 11},
        {"{\"name\":\"a\\\"b\"", "{\"name\":\"a\\\"b\"", 0},
        {"<r>whole</r>", "<r>whole</r>", 0},
    };
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        char *s = strdup(cuts[i].in);
        assert_non_null(s);
        assert_int_equal(vsl_anon_blank_cut(cuts[i].in[0] == '{', s, strlen(s)), cuts[i].blanked);
        assert_string_equal(s, cuts[i].want);
        free(s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),          cmocka_unit_test(test_json),
        cmocka_unit_test(test_ipv6),          cmocka_unit_test(test_url_hosts),
        cmocka_unit_test(test_stop_list),     cmocka_unit_test(test_names_elsewhere),
        cmocka_unit_test(test_case_and_fqdn), cmocka_unit_test(test_short_names),
        cmocka_unit_test(test_macs),          cmocka_unit_test(test_nested_and_consistent),
        cmocka_unit_test(test_datastore_paths), cmocka_unit_test(test_narrow_vocabulary),
        cmocka_unit_test(test_users),         cmocka_unit_test(test_runtime_names),
        cmocka_unit_test(test_identifiers),   cmocka_unit_test(test_blank_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
