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

static const struct {
    const char *in, *want;
} rows[] = {
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
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct vsl_buf b;
        vsl_buf_init(&b, 1 << 20);
        assert_int_equal(vsl_anon_apply(a, 0, rows[i].in, strlen(rows[i].in), &b), 0);
        assert_string_equal(b.len ? b.data : "", rows[i].want);
        vsl_buf_free(&b);
    }
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
