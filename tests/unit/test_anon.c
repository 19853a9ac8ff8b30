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
    {"<name>esx01.corp.example</name>", "<name>anon-host-1</name>"},
    /* A name that is also an API word stays, as does the word. */
    {"<type>VMFS</type><name>VMFS</name>", "<type>VMFS</type><name>VMFS</name>"},
    /* Markup is never changed, only text; a name inside a longer word is not a name. */
    {"<val xsi:type=\"ds-gold\">ds-golden xds-gold</val>",
     "<val xsi:type=\"ds-gold\">ds-golden xds-gold</val>"},
    /* The esxcli answer: XML escaped inside XML text. */
    {"&amp;lt;Device&amp;gt;web &amp;amp; db&amp;lt;/Device&amp;gt;",
     "&amp;lt;Device&amp;gt;anon-vm-1&amp;lt;/Device&amp;gt;"},
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
    assert_int_equal(s.names, 4);      /* esx01, web & db, ds-gold, pool-gold */
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
    /* Not addresses. */
    {"12:30:45 aa:bb:cc:dd:ee:ff 00:50:56:6a:00:01 urn:vim25 2026-12-02T01:03:00Z",
     "12:30:45 aa:bb:cc:dd:ee:ff 00:50:56:6a:00:01 urn:vim25 2026-12-02T01:03:00Z"},
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_ipv6),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
