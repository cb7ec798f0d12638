from course.cloudwave import receipt
from course.cloudwave.nodes import email_key
from course.cloudwave.nodes import email_keyed as email
